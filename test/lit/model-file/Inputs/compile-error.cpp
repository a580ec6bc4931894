// Not C++: the host compiler's error names this file and line.
#include "frontend/ModelRegistry.h"

static int broken = undeclared_name;
