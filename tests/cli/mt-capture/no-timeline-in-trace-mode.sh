# --no-timeline in trace mode: no sampler, no ticker
mt-capture --mode trace --no-timeline -- true
