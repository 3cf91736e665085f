/* Shared by the files of the observed driver only. */
#pragma once

#include "cudasim-observer.h"

/* Tells the observer, if one is installed. Driver lock held. */
void observe_notify(const struct cudasim_event *ev);
