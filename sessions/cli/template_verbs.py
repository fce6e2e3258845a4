"""`template save|list|delete|export|import`: plan templates, through the client's library
(`SessionClient.templates`). Injecting one is a command verb: `command ID inject --template NAME`.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from planner.inputs import shown
from sessions.cli.arguments import session_ref, template_ref
from sessions.cli.context import on_client
from sessions.cli.conventions import EXIT_OK, Subcommand, db_option, emit, path_argument, text_argument
from sessions.errors import SessionInputError

if TYPE_CHECKING:
    from sessions.client.client import SessionClient

__all__ = ["TEMPLATE"]


def _template(args: argparse.Namespace, client: SessionClient) -> int:
    from pathlib import Path

    from planner.inputs import InputError, read_text_file
    from planner.templates import parse_values
    from sessions.client.templates import MAX_FILE_BYTES

    library = client.templates
    if args.action == "save":
        saved = library.save_subtree(
            args.session,
            args.node,
            args.name,
            parse_values(args.param),
            description=args.description,
            children_only=args.children,
        )
        emit({"name": saved.name, "version": saved.version, "params": saved.params, "nodes": saved.size})
    elif args.action == "list":
        emit({"templates": library.listing()})
    elif args.action == "delete":
        emit({"deleted": library.delete(args.ref)})
    elif args.action == "export":
        if args.out is None:
            print(library.export_text(args.names, indent=None))
            return EXIT_OK
        Path(args.out).write_text(library.export_text(args.names))
        emit({"out": args.out})
    else:
        try:
            done = library.import_text(read_text_file(args.file, MAX_FILE_BYTES))
        except InputError as error:
            raise SessionInputError(f"cannot import {shown(args.file)}: {error}") from None
        emit(
            {
                "saved": [f"{t.name}@{t.version}" for t in done.saved],
                "unchanged": [f"{t.name}@{t.version}" for t in done.unchanged],
            }
        )
    return EXIT_OK


def _template_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    save = actions.add_parser("save", help="save a session's subtree as the template's next version")
    save.add_argument("name", type=template_ref, metavar="NAME")
    save.add_argument("--session", required=True, type=session_ref, help="the session holding the subtree")
    save.add_argument("--node", required=True, type=text_argument("node id", 200), help="the subtree's root, e.g. 0.2")
    save.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        type=text_argument("parameter", 600),
        help="write this literal text as the placeholder {NAME} (repeat)",
    )
    save.add_argument("--description", default="", type=text_argument("description", 2000))
    save.add_argument("--children", action="store_true", help="save the node's sub-goals, not the node itself")
    actions.add_parser("list", help="list the templates: each name's newest version and every version it has")
    delete = actions.add_parser("delete", help="delete a template's every version, or NAME@VERSION only")
    delete.add_argument("ref", type=template_ref, metavar="NAME[@VERSION]")
    export = actions.add_parser("export", help="write templates (default all), every version, as JSON")
    export.add_argument("names", nargs="*", type=template_ref, metavar="NAME")
    export.add_argument("--out", type=_output_file, help="the file to write (default: print it)")
    imported = actions.add_parser("import", help="add the templates of an exported JSON file as new versions")
    imported.add_argument("file", type=path_argument("path"))
    for action in (save, delete, export, imported, actions.choices["list"]):
        db_option(action)


def _output_file(text: str) -> str:
    """Where `export --out` writes, checked before anything is read: not a directory, in one that can be made."""
    from pathlib import Path

    path = Path(path_argument("path")(text))
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{shown(path)} is a directory; give a file path such as var/templates.json")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        raise argparse.ArgumentTypeError(f"cannot make the directory for {shown(path)}; give another path") from None
    return str(path)


TEMPLATE = Subcommand(
    "save, list, delete, export or import plan templates (inject one: command ID inject --template)",
    _template_arguments,
    on_client(_template),
)
