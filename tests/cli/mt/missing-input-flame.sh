# mt flame of a capture that does not exist
mt flame nope.mtz
