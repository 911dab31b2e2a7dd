"""core: the protocol's numeric limits, each beside the sentence it comes from."""

from __future__ import annotations

from typing import Final

#: sitemaps.org: "Each Sitemap file that you provide must have no more than 50,000 URLs".
MAX_URLS: Final = 50_000

#: sitemaps.org: "... and must be no larger than 50MB (52,428,800 bytes)" (uncompressed).
MAX_BYTES: Final = 52_428_800

#: sitemaps.org: "Sitemap index files may not list more than 50,000 Sitemaps".
MAX_SITEMAPS: Final = 50_000

#: Google News: "include up to 1,000 news:news tags" per sitemap.
MAX_NEWS: Final = 1_000

#: Google images: "You can specify up to 1,000 image:image tags for each <url>".
MAX_IMAGES: Final = 1_000

#: sitemaps.org <loc>: "This value must be less than 2,048 characters."
MAX_LOC_LENGTH: Final = 2_047

#: sitemap.xsd tLoc: minLength 12.
MIN_LOC_LENGTH: Final = 12

#: Google video: "video:tag ... A maximum of 32 tags is permitted".
MAX_VIDEO_TAGS: Final = 32

#: sitemap-video.xsd: title maxLength 100; description maxLength 2048.
MAX_VIDEO_TITLE: Final = 100
MAX_VIDEO_DESCRIPTION: Final = 2_048

#: Google video: duration "between 1 and 28800 (8 hours) inclusive".
MAX_VIDEO_DURATION: Final = 28_800

#: Google video: uploader "maximum 255 characters".
MAX_UPLOADER: Final = 255

#: Google video sitemaps, <video:thumbnail_loc>: "The image must be at least 160x90 pixels
#: and at most 1920x1080 pixels" (VID718).
MIN_THUMBNAIL: Final = (160, 90)
MAX_THUMBNAIL: Final = (1_920, 1_080)
