# mt flame --at with --diff: a usage error
mt flame --diff --at 1s a.txt b.txt
