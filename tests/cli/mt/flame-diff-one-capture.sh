# --diff with one capture: usage error
mt flame --diff base.mtz
