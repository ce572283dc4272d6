# --at wants a time: seconds, or with ns, us, ms, s
mt-fold --at 3min
