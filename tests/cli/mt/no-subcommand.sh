# nothing to do: usage error
mt
