# an option before the subcommand
mt --rate 4096 record -- true
