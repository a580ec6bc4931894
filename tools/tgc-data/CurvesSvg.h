//===- CurvesSvg.h - training curves drawn as one SVG file ------*- C++ -*-===//
//
// Panels stacked on one step axis (the same x scale in every panel, so that
// a validation point lines up with the training loss at its step), each with
// its own y axis, ticks, axis titles, title, legend and an optional note. A
// series is one <g> with a stable id, a <title> naming it and one <path>
// whose subpaths break at the gaps.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TOOLS_TGCDATA_CURVESSVG_H
#define TGC_TOOLS_TGCDATA_CURVESSVG_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tgc::data {

/// A value at a step; no value is a gap (a null in the metrics file).
struct CurvePoint {
  int64_t step;
  std::optional<double> value;
};

struct CurveSeries {
  std::string id;    ///< e.g. "series-train-loss", the <g>'s id
  std::string label; ///< e.g. "train loss", in the legend and <title>
  std::string color;
  bool markers = false;           ///< a dot at each value (sparse series)
  bool dashed = false;            ///< told apart from a solid one its colour
  std::vector<CurvePoint> points; ///< by increasing step
};

struct CurvePanel {
  std::string title;
  std::string yTitle; ///< e.g. "loss (nats/token)", along the y axis
  std::string note;   ///< a line beside the title; none when empty
  std::vector<CurveSeries> series;
};

/// The SVG document: `title` on top, then the panels. A series without
/// values is named in its panel's legend as "(no values)" and not drawn.
std::string renderCurves(const std::string &title,
                         const std::vector<CurvePanel> &panels);

} // namespace tgc::data

#endif // TGC_TOOLS_TGCDATA_CURVESSVG_H
