# mt help of a subcommand that does not exist
mt help nope
