// libass: subtitle rendering (ASS_Library, ASS_Renderer, ASS_Track).
#include <ass/ass.h>
