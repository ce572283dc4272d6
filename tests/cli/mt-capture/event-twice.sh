# one event per capture
mt-capture -e cpu-clock -e task-clock -- true
