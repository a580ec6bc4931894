// no-schedule.cpp's model registered again under its own name and under
// the built-in Transformer's (registration-errors.test).
#include "no-schedule.cpp"

TGC_REGISTER_MODEL({"transformer", "a second transformer", {"tiny"}, "tiny", build});
TGC_REGISTER_MODEL({"unscheduled", "registered again", {"tiny"}, "tiny", build});
