"""The subcommands: each module registers its argparse parser and hands the work to a stage."""
