# mt record with neither a command nor -p: 125, as mt-capture
mt record
