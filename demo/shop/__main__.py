"""Serve the demo shop in the foreground: ``python -m demo.shop [--port N] [--host H]``."""

from __future__ import annotations

import argparse

from demo.shop.catalog import default_catalog
from demo.shop.server import ShopHTTPServer, resolve_slow_seconds

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The parser of `python -m demo.shop` (docs/cli.md is checked against it)."""
    parser = argparse.ArgumentParser(prog="python -m demo.shop", description="Serve the offline demo shop.")
    parser.add_argument("--port", type=int, default=8765, help="port to listen on (0 picks a free one)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: localhost only)")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    with ShopHTTPServer(
        (args.host, args.port), default_catalog(), log_requests=True, slow_seconds=resolve_slow_seconds()
    ) as httpd:
        host, port = httpd.server_address[:2]
        print(f"Demo Shop at http://{host}:{port}  (Ctrl-C to stop)", flush=True)
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            print("Stopped.")


if __name__ == "__main__":
    main()
