# --diff with a capture that does not exist: environment error
mt flame --diff nope.mtz nope2.mtz
