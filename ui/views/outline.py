"""The approval box's picture: the screenshot taken when an action was held, with the element the action
would touch outlined, so an operator sees what `click [66]` is before deciding.

The outline is drawn on a copy in memory; the screenshot file stays as the environment wrote it (the
report and the live page may show it too). Two colours, a thick magenta band with a black rim outside
it, stand out on light and dark pages alike, and the band lies just outside the element, so the
element itself is seen as it is.
"""

from __future__ import annotations

import base64
import functools
import io

from PIL import Image, ImageDraw

from planner.events import Box

__all__ = ["BAND", "RIM", "outline", "outlined_url"]

BAND = (255, 0, 255)
"""The outline's colour: magenta, rare on web pages."""
RIM = (0, 0, 0)
"""The thin line outside the band, which keeps it seen on a magenta or pale page."""
_BAND_PX = 5
"""The band's least width; a wide screenshot gets a wider one (`_BAND_SHARE`)."""
_BAND_SHARE = 128
"""The band is at least 1/128 of the image's width: the approval box shows a 1280 px screenshot about
400 px wide, where 10 px of band are 3 px on screen."""
_RIM_PX = 2


def outline(image: Image.Image, box: Box) -> Image.Image:
    """A copy of `image` (as RGB) with `box` ringed: the band just outside it, the rim outside that
    (a third of the band, at least `_RIM_PX`), clipped to the image."""
    drawn = image.convert("RGB")  # always a new image, so the caller's is never drawn on
    band = max(_BAND_PX, round(drawn.width / _BAND_SHARE))
    rim = max(_RIM_PX, band // 3)
    draw = ImageDraw.Draw(drawn)
    left, top = round(box.x), round(box.y)
    right, bottom = round(box.x + box.width) - 1, round(box.y + box.height) - 1
    for colour, outside, width in ((RIM, band + rim, rim), (BAND, band, band)):
        draw.rectangle((left - outside, top - outside, right + outside, bottom + outside), outline=colour, width=width)
    return drawn


@functools.lru_cache(maxsize=8)
def outlined_url(picture: bytes, box: Box | None) -> str | None:
    """The screenshot `picture` (its file's bytes), outlined where `box` says (as it is without one), as a
    PNG data URL; None when it is not an image.

    A data URL, like the live page's (`ui.views.page_view.screenshot_url`): the approval box is redrawn
    every tick while the request waits, and Streamlit sends a repeated one by reference. A screenshot
    never changes once written, so each is drawn once."""
    try:
        with Image.open(io.BytesIO(picture)) as image:
            drawn = outline(image, box) if box is not None else image.convert("RGB")
    except OSError:
        return None
    data = io.BytesIO()
    drawn.save(data, format="PNG")
    return "data:image/png;base64," + base64.b64encode(data.getvalue()).decode("ascii")
