# neither a command nor -p: usage error
mt-capture
