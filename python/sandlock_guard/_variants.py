# SPDX-License-Identifier: LGPL-2.1-or-later
"""Which characters a variation selector may follow with a meaning, for telling a variant from
bytes smuggled one selector a character. U+FE0E and U+FE0F choose the text or emoji form of
many characters; U+FE00 to U+FE0D have a meaning only after the bases that Unicode's
StandardizedVariants.txt lists for U+FE00 to U+FE02 (none are listed for the rest); U+E0100
to U+E01EF (the ideographic variation selectors) only after a CJK ideograph. Written out here,
since no packaged copy of that file is there to load at run time: the list of Unicode 15.0
less its ideographs, which IDEOGRAPHS covers whole, and its one ASCII base (the digit zero),
which the rules leave to invisible-unicode like every selector after ASCII."""

# Every variation selector (a character class's ranges), and all of them but U+FE0E and U+FE0F,
# the two that choose a character's text or emoji form.
VARIATION_SELECTORS = "\ufe00-\ufe0f\U000e0100-\U000e01ef"
PLAIN_SELECTORS = "\ufe00-\ufe0d\U000e0100-\U000e01ef"

# The CJK unified and compatibility ideographs (every Unified_Ideograph of Unicode 15.0 too):
# the bases of ideographic variation sequences, and of U+FE00 to U+FE02 for the
# compatibility ideographs' forms.
IDEOGRAPHS = ("\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"
              "\U00030000-\U000323af")
# The other non-ASCII bases of StandardizedVariants.txt for U+FE00 to U+FE0D: Myanmar,
# mathematical operators and letters, CJK punctuation, Phags-pa, full-width forms, Manichaean
# and Egyptian hieroglyphs.
STANDARDIZED_BASES = (
    "\u1000\u1002\u1004\u1010-\u1011\u1015\u1019-\u101a\u101c-\u101d\u1022\u1031\u1075\u1078\u107a"
    "\u1080\u210b\u2110\u2112\u211b\u212c\u2130-\u2131\u2133\u2205\u2229-\u222a\u2268-\u2269"
    "\u2272-\u2273\u228a-\u228b\u2293-\u2295\u2297\u229c\u22da-\u22db\u2a3c-\u2a3d\u2a9d-\u2a9e"
    "\u2aac-\u2aad\u2acb-\u2acc\u3001-\u3002\ua856\ua85c\ua85e-\ua860\ua868\uaa60-\uaa66"
    "\uaa6b-\uaa6c\uaa6f\uaa7a\uff01\uff0c\uff0e\uff10\uff1a-\uff1b\uff1f\U00010ac5-\U00010ac6"
    "\U00010ad6-\U00010ad7\U00010ae1\U00013091-\U00013093\U000130a9\U0001310f\U00013117\U0001311c"
    "\U00013121\U00013127\U00013139\U00013183\U00013187\U000131a0\U000131b1\U000131b8-\U000131ba"
    "\U000131cb\U000131ee\U000131f8-\U000131fa\U00013216\U00013257\U0001327b\U0001327f\U00013285"
    "\U0001328c\U000132a4\U000132aa\U000132cb\U000132dc\U000132e7\U000132e9\U000132f8\U000132fd"
    "\U00013302-\U00013303\U00013307-\U00013308\U00013310-\U00013314\U0001331b-\U0001331c"
    "\U00013321-\U00013322\U00013331\U0001333b-\U0001333c\U0001334a\U00013361\U00013373"
    "\U00013377-\U00013378\U0001337d\U00013385\U00013399-\U0001339a\U000133af-\U000133b0\U000133bf"
    "\U000133d3\U000133dd\U000133f2\U000133f5-\U000133f6\U00013403\U00013416\U00013419-\U0001341a"
    "\U00013423\U0001342c\U0001342e\U00013443-\U00013446\U0001d49c\U0001d49e-\U0001d49f\U0001d4a2"
    "\U0001d4a5-\U0001d4a6\U0001d4a9-\U0001d4ac\U0001d4ae-\U0001d4b5")
