// _Exit(0) from a static initializer, while tgc loads the file.
#include "frontend/ModelRegistry.h"

#include <cstdlib>

static int ended = (std::_Exit(0), 0);
