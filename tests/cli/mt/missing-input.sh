# a capture that does not exist: environment error
mt report nope.mtz
