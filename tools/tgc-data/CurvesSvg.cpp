//===- CurvesSvg.cpp - training curves drawn as one SVG file --------------===//
#include "tools/tgc-data/CurvesSvg.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

namespace tgc::data {
namespace {

constexpr double kPlotWidth = 630, kLeft = 90, kMinRight = 190;
/// About a legend character's width at 12px, to fit the longest label.
constexpr double kCharWidth = 7;
constexpr double kHeaderHeight = 40, kPanelHeight = 250;
constexpr double kPlotTop = 30, kPlotBottom = 45; // a panel's title, x labels
constexpr int kTargetTicks = 5;

std::string escapeXml(const std::string &raw) {
  // XML takes valid UTF-8 only, and no control character but tab and
  // newline (a label or a file name may hold anything).
  const std::string text =
      llvm::json::isUTF8(raw) ? raw : llvm::json::fixUTF8(raw);
  std::string out;
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n')
        out += "\xEF\xBF\xBD"; // U+FFFD
      else
        out += c;
    }
  }
  return out;
}

/// A range widened to round tick values (1, 2 or 5 times a power of ten),
/// so that every value lies between the first and the last tick.
struct Axis {
  double lo, hi, tick;
  int decimals; ///< enough to tell the ticks apart

  Axis(double min, double max, bool integers) {
    if (!(max > min)) { // one value: a band around it
      double pad = min == 0 ? 1 : std::fabs(min) * 0.1;
      min -= pad;
      max += pad;
    }
    double raw = (max - min) / kTargetTicks;
    double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    double f = raw / magnitude;
    tick = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * magnitude;
    if (integers)
      tick = std::max(1.0, std::round(tick));
    lo = std::floor(min / tick) * tick;
    hi = std::ceil(max / tick) * tick;
    decimals =
        std::clamp(static_cast<int>(-std::floor(std::log10(tick))), 0, 12);
  }

  std::vector<double> ticks() const {
    std::vector<double> values;
    long n = std::lround((hi - lo) / tick);
    for (long i = 0; i <= n; ++i) {
      double v = lo + static_cast<double>(i) * tick;
      values.push_back(std::fabs(v) < tick * 1e-9 ? 0.0 : v); // no "-0.00"
    }
    return values;
  }
  std::string label(double v) const {
    std::string text;
    llvm::raw_string_ostream(text) << llvm::format("%.*f", decimals, v);
    return text;
  }
  /// `v`'s position between `from` (at lo) and `to` (at hi).
  double map(double v, double from, double to) const {
    return from + (v - lo) / (hi - lo) * (to - from);
  }
};

bool hasValues(const CurveSeries &series) {
  return std::any_of(series.points.begin(), series.points.end(),
                     [](const CurvePoint &p) { return p.value.has_value(); });
}

class Renderer {
public:
  Renderer(llvm::raw_ostream &os, const Axis &steps) : os(os), steps(steps) {}
  void panel(const CurvePanel &panel, double top);

private:
  void series(const CurveSeries &series, const Axis &y, double top,
              double bottom);
  void legend(const CurvePanel &panel, double top);

  llvm::raw_ostream &os;
  const Axis &steps;
  const double left = kLeft, right = kLeft + kPlotWidth;
};

void Renderer::panel(const CurvePanel &panel, double top) {
  double plotTop = top + kPlotTop,
         plotBottom = top + kPanelHeight - kPlotBottom;
  os << "<g class=\"panel\">\n"
     << llvm::format("<text x=\"%.0f\" y=\"%.0f\" class=\"panel-title\">", left,
                     plotTop - 10)
     << escapeXml(panel.title) << "</text>\n";
  if (!panel.note.empty())
    os << llvm::format("<text x=\"%.0f\" y=\"%.0f\" class=\"note\" "
                       "text-anchor=\"end\">",
                       right, plotTop - 10)
       << escapeXml(panel.note) << "</text>\n";
  os << llvm::format("<text x=\"16\" y=\"%.0f\" class=\"axis-title "
                     "y-title\" text-anchor=\"middle\" "
                     "transform=\"rotate(-90 16 %.0f)\">",
                     (plotTop + plotBottom) / 2, (plotTop + plotBottom) / 2)
     << escapeXml(panel.yTitle) << "</text>\n"
     << llvm::format("<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" "
                     "height=\"%.0f\" class=\"frame\"/>\n",
                     left, plotTop, right - left, plotBottom - plotTop);
  for (double step : steps.ticks()) {
    double x = steps.map(step, left, right);
    os << llvm::format("<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
                       "class=\"grid\"/>\n",
                       x, plotTop, x, plotBottom)
       << llvm::format("<text x=\"%.2f\" y=\"%.2f\" class=\"tick x-tick\" "
                       "text-anchor=\"middle\">",
                       x, plotBottom + 16)
       << steps.label(step) << "</text>\n";
  }
  os << llvm::format("<text x=\"%.0f\" y=\"%.0f\" class=\"axis-title "
                     "x-title\" text-anchor=\"middle\">update step</text>\n",
                     (left + right) / 2, plotBottom + 34);

  double min = INFINITY, max = -INFINITY;
  for (const CurveSeries &s : panel.series)
    for (const CurvePoint &p : s.points)
      if (p.value) {
        min = std::min(min, *p.value);
        max = std::max(max, *p.value);
      }
  if (min > max) {
    os << llvm::format("<text x=\"%.0f\" y=\"%.0f\" class=\"no-values\" "
                       "text-anchor=\"middle\">no values</text>\n",
                       (left + right) / 2, (plotTop + plotBottom) / 2);
  } else {
    Axis y(min, max, /*integers=*/false);
    for (double v : y.ticks()) {
      double at = y.map(v, plotBottom, plotTop);
      os << llvm::format("<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" "
                         "y2=\"%.2f\" class=\"grid\"/>\n",
                         left, at, right, at)
         << llvm::format("<text x=\"%.2f\" y=\"%.2f\" class=\"tick y-tick\" "
                         "text-anchor=\"end\">",
                         left - 6, at + 4)
         << y.label(v) << "</text>\n";
    }
    for (const CurveSeries &s : panel.series)
      if (hasValues(s))
        series(s, y, plotTop, plotBottom);
  }
  legend(panel, plotTop);
  os << "</g>\n";
}

void Renderer::series(const CurveSeries &series, const Axis &y, double top,
                      double bottom) {
  // The runs of values between gaps, in pixels.
  std::vector<std::vector<std::pair<double, double>>> pieces(1);
  size_t values = 0;
  for (const CurvePoint &p : series.points) {
    if (!p.value) {
      if (!pieces.back().empty())
        pieces.emplace_back();
      continue;
    }
    ++values;
    pieces.back().emplace_back(
        steps.map(static_cast<double>(p.step), left, right),
        y.map(*p.value, bottom, top));
  }
  std::string path, dots;
  llvm::raw_string_ostream d(path), markers(dots);
  for (const auto &piece : pieces)
    for (size_t i = 0; i < piece.size(); ++i) {
      auto [px, py] = piece[i];
      d << (path.empty() ? "" : " ") << (i == 0 ? "M" : "L")
        << llvm::format("%.2f,%.2f", px, py);
      // A value alone between gaps draws no line: a dot shows it.
      if (series.markers || piece.size() == 1)
        markers << llvm::format("<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3\" "
                                "fill=\"%s\"/>\n",
                                px, py, series.color.c_str());
    }
  os << "<g id=\"" << series.id << "\" class=\"series\">\n<title>"
     << escapeXml(series.label) << " (" << values << " values)</title>\n"
     << "<path d=\"" << path << "\" fill=\"none\" stroke=\"" << series.color
     << "\" stroke-width=\"1.5\" stroke-linejoin=\"round\""
     << (series.dashed ? " stroke-dasharray=\"6 3\"" : "") << "/>\n"
     << dots << "</g>\n";
}

void Renderer::legend(const CurvePanel &panel, double top) {
  double x = right + 16, y = top + 12;
  for (const CurveSeries &s : panel.series) {
    bool drawn = hasValues(s);
    os << "<g class=\"legend\" id=\"legend-" << s.id << "\">";
    if (drawn)
      os << llvm::format("<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" "
                         "y2=\"%.0f\" stroke=\"%s\" stroke-width=\"3\"%s/>",
                         x, y - 4, x + 20, y - 4, s.color.c_str(),
                         s.dashed ? " stroke-dasharray=\"6 3\"" : "");
    os << llvm::format("<text x=\"%.0f\" y=\"%.0f\">", x + 26, y)
       << escapeXml(s.label) << (drawn ? "" : " (no values)")
       << "</text></g>\n";
    y += 18;
  }
}

} // namespace

std::string renderCurves(const std::string &title,
                         const std::vector<CurvePanel> &panels) {
  // One step axis for every panel.
  double first = INFINITY, last = -INFINITY;
  for (const CurvePanel &panel : panels)
    for (const CurveSeries &s : panel.series)
      for (const CurvePoint &p : s.points) {
        first = std::min(first, static_cast<double>(p.step));
        last = std::max(last, static_cast<double>(p.step));
      }
  if (first > last)
    first = last = 0;
  Axis steps(first, last, /*integers=*/true);

  double height =
      kHeaderHeight + kPanelHeight * static_cast<double>(panels.size());
  // Wide enough for the longest legend label (run names may be long).
  size_t longest = 0;
  for (const CurvePanel &panel : panels)
    for (const CurveSeries &s : panel.series)
      longest = std::max(longest, s.label.size() + 11); // + " (no values)"
  double width =
      kLeft + kPlotWidth +
      std::max(kMinRight, 50 + kCharWidth * static_cast<double>(longest));
  std::string svg;
  llvm::raw_string_ostream os(svg);
  os << llvm::format("<svg xmlns=\"http://www.w3.org/2000/svg\" "
                     "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                     "font-family=\"sans-serif\" font-size=\"12\">\n",
                     width, height, width, height)
     << "<title>" << escapeXml(title) << "</title>\n"
     << "<style>.frame{fill:none;stroke:#888}.grid{stroke:#e4e4e4}"
        ".panel-title{font-size:14px;font-weight:bold}.tick{fill:#444}"
        ".no-values{fill:#888}.note{fill:#555;font-size:11px}"
        ".axis-title{fill:#333}</style>\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
     << llvm::format("<text x=\"%.0f\" y=\"24\" font-size=\"15\">", kLeft)
     << escapeXml(title) << "</text>\n";
  Renderer renderer(os, steps);
  for (size_t i = 0; i < panels.size(); ++i)
    renderer.panel(panels[i],
                   kHeaderHeight + kPanelHeight * static_cast<double>(i));
  os << "</svg>\n";
  return svg;
}

} // namespace tgc::data
