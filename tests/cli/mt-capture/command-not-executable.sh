# a file without execute permission: 126, as env(1)
printf "#!/bin/sh\n" > f
chmod 644 f
mt-capture -o x.data -- ./f
