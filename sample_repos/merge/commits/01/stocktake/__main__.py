"""Command line: `python3 -m stocktake INVENTORY [--reorder-file OUT]`."""

import argparse

from stocktake import export, parse, report


def main():
    cli = argparse.ArgumentParser(prog="stocktake", description="Stock on hand per site.")
    cli.add_argument("inventory", help="the inventory file")
    cli.add_argument("--reorder-file", metavar="OUT", help="also write the reorder list to OUT")
    args = cli.parse_args()
    items, rejected = parse.load(args.inventory)
    print("\n".join(report.lines(items, rejected)))
    if args.reorder_file:
        listed = export.write_reorder(items, args.reorder_file)
        print(f"reorder list: {listed} items in {args.reorder_file}")


main()
