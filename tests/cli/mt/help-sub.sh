# mt help SUB: that subcommand's help, as mt SUB --help
mt help report
