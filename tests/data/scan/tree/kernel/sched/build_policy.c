#include "sched.h"
