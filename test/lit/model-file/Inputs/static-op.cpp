// A DSL op at a model file's static initialization (while tgc loads it):
// outside any buildGraph (static-op.test).
#include "frontend/ModelRegistry.h"
#include "frontend/Ops.h"

using namespace tgc;

static int early = ((void)constant(1.0, {2}), 0);
