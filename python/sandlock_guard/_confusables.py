# SPDX-License-Identifier: LGPL-2.1-or-later
"""Letters of other scripts that look like Latin ones, mapped to the Latin letter (after case
folding, so only lower case is listed). NFKC already folds full-width, mathematical and
compatibility forms; this table covers what it leaves: Cyrillic, Greek and a few Latin
variants that an attacker swaps in to hide "ignore" from a pattern. A short hand-written table
of the letters that matter for English instructions, since no packaged source of the Unicode
confusables data is available to load at run time."""

CONFUSABLES = {
    # Cyrillic
    "а": "a", "б": "b", "в": "b", "г": "r", "д": "d", "е": "e", "ё": "e", "һ": "h",
    "н": "h", "і": "i", "ї": "i", "ӏ": "l", "ј": "j", "к": "k", "м": "m", "п": "n",
    "о": "o", "р": "p", "ԛ": "q", "с": "c", "ѕ": "s", "т": "t", "у": "y", "ү": "y",
    "х": "x", "ԝ": "w", "ԁ": "d", "ɡ": "g", "ѡ": "w", "ꙇ": "i",
    # Greek
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o",
    "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "γ": "y", "ω": "w", "ϲ": "c", "ϳ": "j",
    "μ": "u", "ϱ": "p",
    # Armenian
    "օ": "o", "ս": "u", "ո": "n", "հ": "h", "ց": "g",
    # Latin variants
    "ı": "i", "ɑ": "a", "ɩ": "i", "ʏ": "y", "ɪ": "i", "ᴀ": "a", "ᴄ": "c", "ᴅ": "d",
    "ᴇ": "e", "ɢ": "g", "ʜ": "h", "ᴋ": "k", "ʟ": "l", "ᴍ": "m", "ɴ": "n", "ᴏ": "o",
    "ᴘ": "p", "ʀ": "r", "ꜱ": "s", "ᴛ": "t", "ᴜ": "u", "ᴠ": "v", "ᴡ": "w", "ᴢ": "z",
}
