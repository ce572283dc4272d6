# an option mt report does not have
mt report --frobnicate x.mtz
