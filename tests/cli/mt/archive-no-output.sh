# mt archive without -o: usage error (the capture is not read)
mt archive x.mtz
