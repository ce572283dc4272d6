# --width below the narrowest layout: usage error
mt-fold --sites --width 40
