"""What the agent's page does on its own: it crashes, opens tabs, downloads files, asks questions.

Playwright tells of each as an event, delivered on the environment's thread whenever it next calls
the browser. Each is noted here and reported (one sentence each, at the head of the next observation),
so the agent learns what the page did even when no action asked for it: a dialog is answered at once
(`planner.browser.dialogs`), a download saved, a tab the action did not lead to closed.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Dialog, Download, Error
from playwright.sync_api import Page as PlaywrightPage

from planner.browser.dialogs import DialogAnswer, answer_dialog
from planner.browser.failures import first_line
from planner.browser.fence import Fence
from planner.guard import GuardRules, is_web_url

__all__ = ["PageEvents", "tab_report"]

_DOWNLOADS = "downloads"
"""Where downloaded files go, inside the screenshot folder (the session's artifacts)."""
_UNSAFE_NAME = re.compile(r"[^\w .()+,=@-]")
_MAX_NAME = 120


class PageEvents:
    """The events of the agent's page and what they left: `report` receives a sentence for each; a
    risky dialog held for approval is kept as the running action's failure (`fence` says whether an
    action runs, and whether it was approved); downloads are saved into `artifacts/downloads`."""

    def __init__(
        self,
        fence: Fence,
        guard_rules: GuardRules,
        report: Callable[[str], None],
        artifacts: Path | None,
        timeout_ms: int,
    ) -> None:
        self._fence = fence
        self._guard_rules = guard_rules
        self._report = report
        self._artifacts = artifacts
        self._timeout_ms = timeout_ms
        self._page: PlaywrightPage | None = None
        self._crashed = False
        self._held: DialogAnswer | None = None
        self._popups: list[PlaywrightPage] = []
        self._downloads: list[Download] = []

    def attach(self, page: PlaywrightPage) -> None:
        """Listen to `page`, the agent's new page, which has not crashed."""
        page.on("crash", self._on_crash)
        page.on("popup", self._on_popup)
        page.on("dialog", self._on_dialog)
        page.on("download", self._on_download)
        self._page, self._crashed = page, False

    def start(self) -> None:
        """An action begins: no dialog of its own has been held yet."""
        self._held = None

    @property
    def crashed(self) -> bool:
        return self._crashed

    def note_crash(self) -> None:
        """A call to the page failed because it crashed, which its event may not have said yet."""
        self._crashed = True

    @property
    def held(self) -> DialogAnswer | None:
        """The dialog the running action opened that was dismissed for want of approval."""
        return self._held

    @property
    def tab_opened(self) -> bool:
        return bool(self._popups)

    @property
    def download_started(self) -> bool:
        """A download started that is not saved yet."""
        return bool(self._downloads)

    def save_downloads(self) -> None:
        """Save every download that started, reporting each."""
        while self._downloads:
            self._report(self._save_download(self._downloads.pop(0)))

    def newest_tab(self, page: PlaywrightPage) -> tuple[str, str] | None:
        """The URL of the newest tab once its document starts to arrive, with its title when that URL is
        no web address; None when no tab opened. Every tab beside `page` is closed, all but that one reported."""
        if not self._popups:
            return None
        popup = self._popups[-1]
        try:
            popup.wait_for_load_state("domcontentloaded", timeout=self._timeout_ms)
            url = popup.url
        finally:
            title = self.close_stray_tabs(page, followed=popup)
        return url, title

    def close_stray_tabs(self, page: PlaywrightPage, followed: PlaywrightPage | None = None) -> str:
        """Close every tab but `page`, reporting each but `followed`, whose title is returned for its own
        report: a tab that came too late for its action to follow, or beside the one it followed, is never
        left open unseen."""
        self._popups.clear()
        followed_title = ""
        for tab in page.context.pages:
            if tab is page:
                continue
            try:
                url = tab.url
                title = "" if is_web_url(url) else tab.title()  # a page a script wrote: its title says what it is
                tab.close()
            except Error:
                continue  # it closed itself meanwhile
            if tab is followed:
                followed_title = title
            else:
                self._report(tab_report(url, title))
        return followed_title

    def _on_crash(self, page: PlaywrightPage) -> None:
        if page is self._page:
            self._crashed = True

    def _on_popup(self, popup: PlaywrightPage) -> None:
        self._popups.append(popup)

    def _on_download(self, download: Download) -> None:
        """Note a download as it starts; it is saved (waiting for it to finish) before the next observation."""
        self._downloads.append(download)

    def _on_dialog(self, dialog: Dialog) -> None:
        """Answer a dialog at once (the page waits for it) and note it for the next observation; a risky
        confirm dismissed for want of approval is remembered as the running action's failure. One the
        page opens between actions (from a timer longer than an action waits for, `planner.browser.promises`)
        is answered unapproved and reported as such: no action is there to hold."""
        answer = answer_dialog(
            dialog.type, dialog.message, dialog.default_value, self._guard_rules, self._fence.approved
        )
        try:
            if not answer.accept:
                dialog.dismiss()
            elif answer.text is not None:
                dialog.accept(answer.text)
            else:
                dialog.accept()
        except Error:
            pass  # the page went away with its dialog
        if not self._fence.acting:
            self._report(f"between actions, {answer.report}")
        else:
            self._report(answer.report)
            if answer.held is not None:
                self._held = answer

    def _save_download(self, download: Download) -> str:
        """Keep a file the page downloaded in the session's artifacts (`downloads/`, beside the screenshots),
        never opening it, and say what it was; without a screenshot folder it is dropped with the browser."""
        url = download.url if len(download.url) <= 200 else download.url[:199] + "…"
        name = _safe_name(download.suggested_filename)
        try:
            if self._artifacts is None:
                size = Path(download.path()).stat().st_size
                return f"the page downloaded {name!r} ({size:,} bytes) from {url}; not kept (no artifacts folder)"
            folder = self._artifacts / _DOWNLOADS
            folder.mkdir(parents=True, exist_ok=True)
            path = _free_path(folder / name)
            download.save_as(path)
            size = path.stat().st_size
        except (Error, OSError) as error:
            return f"the page tried to download {name!r} from {url}, which failed: {first_line(error)}"
        return (
            f"the page downloaded {name!r} ({size:,} bytes) from {url}; saved as {_DOWNLOADS}/{path.name}, not opened"
        )


def tab_report(url: str, title: str) -> str:
    """What the agent learns of a tab it was not taken to: where it was, and how to open it if it can be."""
    shown = url if len(url) <= 200 else url[:199] + "…"
    opened = f"the page opened a new tab at {shown}" + (f" titled {title.strip()!r}" if title.strip() else "")
    if not is_web_url(url):
        return f"{opened}, which is no web address to open here; the tab was closed"
    return f"{opened}, which was not followed; the tab was closed (goto its URL to open it)"


def _safe_name(suggested: str) -> str:
    """A downloaded file's name as it is saved and reported: the last part of what the page suggested
    (a path with / or \\ is cut to its end), control and formatting characters (a right-to-left override
    that turns "gpj.exe" into "exe.jpg" on screen) and anything but letters, digits and plain punctuation
    replaced by "_", no leading dot (no hidden file), at most `_MAX_NAME` characters with its extension kept."""
    name = unicodedata.normalize("NFC", re.split(r"[/\\]", suggested)[-1])
    name = "".join("_" if unicodedata.category(c)[0] == "C" else c for c in name)
    name = _UNSAFE_NAME.sub("_", name).strip(" .")
    if len(name) > _MAX_NAME:
        _, dot, extension = name.rpartition(".")
        keep = f".{extension}" if dot and len(extension) <= 10 else ""
        name = name[: _MAX_NAME - len(keep)] + keep
    return name or "download"


def _free_path(path: Path) -> Path:
    """`path`, or `name (2).ext`, `name (3).ext`... when a file of that name was downloaded before."""
    candidate, number = path, 1
    while candidate.exists():
        number += 1
        candidate = path.with_name(f"{path.stem} ({number}){path.suffix}")
    return candidate
