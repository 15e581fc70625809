# SPDX-License-Identifier: LGPL-2.1-or-later
"""The built-in rules. Each is a Rule like a custom one, so a custom rule cannot take an id of
theirs. The patterns look for the shape of an instruction aimed at a model (a verb telling it
to drop, reveal or send something, plus what), not for single words, so prose that talks about
"ignoring" a warning or about "the system prompt" stays clean. Bump RULESET_VERSION whenever a
pattern changes: reports carry it so a verdict can be traced to the rules that made it."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

from ._types import Rule
from ._variants import IDEOGRAPHS, STANDARDIZED_BASES, VARIATION_SELECTORS

RULESET_VERSION = "sandlock-guard-3"

_PRIOR = (r"(?:previous|prior|above|earlier|preceding|foregoing|former|initial|original|"
          r"existing|old|system|developer)")
_ORDERS = (r"(?:instructions?|prompts?|rules|directions|guidelines|commands|orders|"
           r"messages|context|constraints|guidance|programming)")
_EXPOSE = (r"(?:reveal|print|show|display|output|repeat|recite|tell|give|leak|dump|disclose|"
           r"write\s+out|spell\s+out|share|paste|list|echo|return)")
_SECRET = (r"(?:api[\s_-]?keys?|secret\s+keys?|access\s+(?:keys?|tokens?)|auth(?:entication)?"
           r"\s+tokens?|bearer\s+tokens?|tokens|credentials|passwords?|passphrases?|"
           r"private\s+keys?|ssh\s+keys?|environment\s+variables|env\s+vars|\.env\s+file|"
           r"~/\.ssh\S*|id_rsa|id_ed25519|aws_secret\w*|cookies|session\s+ids?)")
_SEND = (r"(?:send|post|upload|exfiltrate|forward|transmit|e-?mail|mail|curl|wget|beam|"
         r"leak|copy|submit|deliver|ship)")
_DEST = (r"(?:to|at|into|via)\s+(?:https?://|ftp://|\S+@\S+\.\w+|[\w-]+(?:\.[\w-]+)+|my\s+|"
         r"this\s+|the\s+following\s+)")
_CONVO = (r"(?:conversation|chat(?:\s+history|\s+log)?|message\s+history|(?:previous|prior|"
          r"earlier|past|other)\s+messages|transcript|context\s+window|dialog(?:ue)?|"
          r"user'?s?\s+(?:messages|data|files|history))")

# The invisible (default-ignorable) characters and blanks that the Unicode rules look for next
# to ASCII: all of them but the bidirectional ones, the tag characters and the variation
# selectors, which have rules or alternatives of their own. A variation selector after an
# emoji, a joiner between emoji and the non-joiner between Persian letters are not next to
# ASCII; a keycap (#, digits) is followed by U+20E3.
_HIDDEN = ("\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200d\u2060-\u2065"
           "\u206a-\u206f\u2800\u3164\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3"
           "\U0001d173-\U0001d17a\U000e0080-\U000e00ff\U000e01f0-\U000e0fff")
# Whitespace but the newline (\s is str.isspace()), for the blanks a pattern skips after a line
# start: with \s there, a run of blank lines is scanned again from each of its newlines (a MiB
# of them took 15 s), and a match that crossed blank lines starts at the last one's line start
# as well.
_BLANK = r"\t\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"

BUILTIN_RULES: tuple[Rule, ...] = (
    Rule("override-previous-instructions",
         rf"\b(?:ignore|disregard|forget|override|bypass|skip|drop|abandon|discard|neglect)"
         rf"\s+(?:(?:all|any|every|each|of|the|your|my|these|those|its)\s+)*"
         rf"(?:{_PRIOR}\s+){{1,2}}(?:\w+\s+)?{_ORDERS}",
         "high", "instruction override: asks to ignore earlier instructions"),
    Rule("override-everything-above",
         r"\b(?:ignore|disregard|forget)\s+(?:about\s+)?(?:everything|anything|all|whatever)"
         r"\s+(?:(?:that\s+)?(?:was\s+|is\s+)?(?:said|written|stated|mentioned|told)\s+)?"
         r"(?:above|before|earlier|previously|so\s+far|until\s+now|you\s+(?:were|have\s+been)"
         r"\s+told)",
         "high", "instruction override: asks to ignore everything said before"),
    Rule("override-new-instructions",
         rf"(?m)(?:^[{_BLANK}>#*-]*(?:new|updated|revised|real|actual|true)\s+(?:system\s+)?"
         r"instructions?\s*:|\byour\s+(?:new|real|actual|true)\s+(?:instructions|task|"
         r"purpose|goal|objective)\s+(?:is|are)\b|\bfrom\s+now\s+on,?\s+you\s+(?:are|will|must|"
         r"shall)\s+(?:only\s+)?(?:act|obey|follow|respond|answer|ignore|no\s+longer|be\s+"
         r"(?:a|an|my)\b))",
         "medium", "instruction override: announces replacement instructions"),
    Rule("system-prompt-extraction",
         rf"\b{_EXPOSE}\s+(?:me\s+|us\s+)?(?:(?:all|of|exactly|verbatim|back)\s+)*your\s+"
         rf"(?:(?:entire|full|complete|exact|original|initial|hidden|secret|internal|"
         rf"verbatim|first|whole)\s+)*(?:system\s+(?:prompt|message|instructions)|"
         rf"(?:initial\s+|original\s+|hidden\s+)?instructions|pre-?prompt|prompt|guidelines|"
         rf"configuration|rules)"
         rf"|\bwhat\s+(?:is|was|are|were)\s+your\s+(?:system\s+prompt|initial\s+instructions|"
         rf"original\s+instructions|hidden\s+instructions|instructions)\b"
         rf"|\b(?:repeat|print|output|recite|reproduce)\s+(?:all\s+|the\s+)?(?:words|text|"
         rf"everything|lines)\s+(?:above|before\s+this|preceding)"
         rf"|\b(?:repeat|print|output|reveal)\s+(?:the\s+)?(?:text|prompt|message)\s+that\s+"
         rf"(?:starts|begins)\s+with\s+[\"']?you\s+are",
         "high", "system prompt extraction: asks for the model's hidden instructions"),
    Rule("chat-template-tokens",
         r"<\|\s*(?:im_start|im_end|im_sep|system|user|assistant|endoftext|eot_id|eom_id|"
         r"start_header_id|end_header_id|begin_of_text|end_of_text|fim_\w+)\s*\|>"
         r"|\[/?inst\]|<</?sys>>|<start_of_turn>|<end_of_turn>"
         r"|<\|(?:im_start|start_header_id)\|>",
         "critical", "role injection: chat template delimiter tokens"),
    Rule("forged-conversation-turn",
         r"(?m)^[ \t>*#]*(?:system|assistant|developer|ai|chatgpt|claude)\s*:\s*(?:\*\*)?"
         r"(?:you\s+(?:are|must|will|should|shall|now)\b|ignore\b|disregard\b|sure[,!.]|"
         r"okay[,!.]|ok[,!.]|certainly[,!.]|of\s+course[,!.]|i\s+will\b|i'll\b|i\s+have\s+been|"
         r"new\s+instructions|from\s+now|override\b|(?:developer|admin|god)\s+mode)"
         rf"|^[{_BLANK}]*#{{2,}}\s*(?:system|instruction|new\s+instructions?)\s*#*\s*:?\s*$"
         rf"|\n[{_BLANK}]*(?:human|user)\s*:[^\n]{{0,200}}\n\s*(?:assistant|ai)\s*:",
         "high", "role injection: a forged conversation turn"),
    Rule("jailbreak-persona",
         r"\bdo\s+anything\s+now\b|\b(?:developer|god|jailbreak|jailbroken|unrestricted|"
         r"unfiltered|evil)\s+mode\s+(?:is\s+)?(?:now\s+)?(?:enabled|activated|engaged)"
         r"(?:\s*[.!:;,]|\s+you\b|\s*$)"
         r"|\b(?:enable|activate|enter|switch\s+to)\s+(?:developer|god|jailbreak|unrestricted|"
         r"unfiltered|dan)\s+mode\b"
         r"|\byou\s+are\s+(?:now\s+)?(?:free|freed|released|liberated|unshackled)\s+from\s+"
         r"(?:all\s+|any\s+|your\s+)*(?:rules|restrictions|guidelines|limitations|"
         r"constraints|policies|programming|filters)"
         r"|\bpretend\s+(?:that\s+)?you\s+(?:are|have)\s+(?:an?\s+)?(?:ai\s+)?(?:with\s+)?no\s+"
         r"(?:rules|restrictions|guidelines|filters|limits|limitations|morals|ethics)"
         r"|\b(?:act|behave|respond)\s+as\s+(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|"
         r"jailbroken)\b",
         "high", "jailbreak: asks the model to take an unrestricted persona"),
    Rule("safety-override",
         r"\b(?:ignore|bypass|disable|turn\s+off|override|circumvent|deactivate|remove|"
         r"forget|suspend|evade)\s+(?:(?:all|any|of|the|your|its|these)\s+)*(?:safety|content|"
         r"ethical|ethics|moral|security|alignment|censorship|refusal|openai|anthropic)\s+"
         r"(?:guidelines|filters?|restrictions|rules|policies|protocols|training|"
         r"guardrails|constraints|measures|settings|safeguards)"
         r"|\b(?:without|with\s+no)\s+(?:any\s+)?(?:restrictions|censorship|content\s+filters?|"
         r"safety\s+(?:filters?|guidelines|restrictions)|ethical\s+(?:guidelines|constraints))"
         r"\s*(?:,|\.|and|or)?\s*(?:you|answer|respond|reply|tell|write|explain)\b"
         r"|\b(?:no\s+longer|not)\s+bound\s+by\s+(?:any\s+|your\s+)*(?:rules|guidelines|"
         r"restrictions|policies|content\s+polic(?:y|ies))",
         "high", "jailbreak: asks the model to drop its safety rules"),
    Rule("secret-exfiltration",
         rf"\b{_SEND}\s+(?:(?:me|us|all|the|your|any|my|our|every|of|user'?s?|these|their)\s+)*"
         rf"(?:\w+\s+){{0,2}}{_SECRET}(?:[^\n.]{{0,80}}?){_DEST}"
         rf"|\b(?:{_EXPOSE}|what\s+(?:is|are))\s+(?:me\s+|us\s+)?(?:(?:all|the|of|any)\s+)*"
         rf"(?:your|the\s+user'?s?|the\s+admin(?:istrator)?'?s?)\s+(?:stored\s+|saved\s+)?"
         rf"(?:api[\s_-]?keys?|passwords?|credentials|secret\s+keys?|access\s+tokens?|"
         rf"private\s+keys?|environment\s+variables)"
         rf"|\b(?:cat|read|open|print|dump|output)\s+(?:the\s+)?(?:contents\s+of\s+)?"
         rf"(?:~/\.ssh/\S+|~/\.aws/credentials|/etc/shadow|\$home/\.ssh\S*)",
         "high", "exfiltration: asks for secrets or to send them out"),
    Rule("conversation-exfiltration",
         rf"\b{_SEND}\s+(?:(?:a|copy|of|the|this|our|your|all|entire|whole|full|complete|"
         rf"previous|prior|current)\s+)*{_CONVO}(?:[^\n.]{{0,80}}?){_DEST}"
         rf"|!\[[^\]\n]*\]\(\s*https?://[^)\s]*[?&][\w.-]+=\s*(?:\{{|\[|<|\$|%7b)"
         rf"|\b(?:append|embed|encode|include|put)\s+(?:(?:the|this|our|entire|whole|full)\s+)*"
         rf"{_CONVO}\s+(?:in|into|to|as)\s+(?:the\s+|a\s+)?(?:url|link|image|query)",
         "high", "exfiltration: asks to send the conversation out"),
    Rule("invisible-unicode",
         rf"(?<=[\x21-\x7e])[{_HIDDEN}]|[{_HIDDEN}](?=[\x21-\x7e])"
         rf"|(?<=[\x21-\x7e])[{VARIATION_SELECTORS}](?!\u20e3)",
         "medium", "hidden text: invisible characters inside words"),
    Rule("unicode-tag-characters",
         r"[\U000e0000-\U000e007f]",
         "high", "hidden text: Unicode tag characters (invisible ASCII)"),
    Rule("bidi-control",
         r"[\u202a-\u202e\u2066-\u2069]|(?<=[\x21-\x7e])[\u061c\u200e\u200f](?=[\x21-\x7e])",
         "high", "hidden text: bidirectional override characters"),
    # A run of selectors, or one where no variant is defined: a supplementary selector after
    # anything but an ideograph, one of U+FE00-FE0D after a character with no standardized
    # variant (an emoji has only the text and emoji forms of U+FE0E and U+FE0F). One after
    # ASCII is invisible-unicode's. Each alternative opens with the selector and looks back
    # past it, so that the search skips to selectors instead of trying a lookbehind at every
    # character.
    Rule("variation-selector-smuggling",
         rf"[{VARIATION_SELECTORS}]{{2,}}"
         rf"|[\U000e0100-\U000e01ef](?<![\x21-\x7e{IDEOGRAPHS}].)"
         rf"|[\ufe00-\ufe02](?<![\x21-\x7e{STANDARDIZED_BASES}{IDEOGRAPHS}].)"
         rf"|[\ufe03-\ufe0d](?<![\x21-\x7e].)",
         "high", "hidden text: bytes smuggled as variation selectors"),
)



# Where a match of each text rule can start: every top-level alternative of its pattern begins
# with one of these literals ("\n": at a line start, or at the newline itself). The rules run
# on the normalized views, which are case folded, so they are compiled without IGNORECASE and
# tried only where a lead occurs: str.find skips through a MiB in well under a millisecond,
# while a search for a pattern that opens with an alternation of words tries every position
# and takes a third of a second. test_guard.py checks that both ways find the same.
_SEND_LEADS = ("send", "post", "upload", "exfiltrate", "forward", "transmit", "e-mail", "email",
               "mail", "curl", "wget", "beam", "leak", "copy", "submit", "deliver", "ship")
_EXPOSE_LEADS = ("reveal", "print", "show", "display", "output", "repeat", "recite", "tell",
                 "give", "leak", "dump", "disclose", "write", "spell", "share", "paste", "list",
                 "echo", "return")
LEADS = {
    "override-previous-instructions": ("ignore", "disregard", "forget", "override", "bypass",
                                       "skip", "drop", "abandon", "discard", "neglect"),
    "override-everything-above": ("ignore", "disregard", "forget"),
    "override-new-instructions": ("\n", "your", "from"),
    "system-prompt-extraction": _EXPOSE_LEADS + ("what", "reproduce"),
    "chat-template-tokens": ("<|", "[inst]", "[/inst]", "<<sys>>", "<</sys>>",
                             "<start_of_turn>", "<end_of_turn>"),
    "forged-conversation-turn": ("\n",),
    "jailbreak-persona": ("do", "developer", "god", "jailbreak", "jailbroken", "unrestricted",
                          "unfiltered", "evil", "enable", "activate", "enter", "switch", "you",
                          "pretend", "act", "behave", "respond"),
    "safety-override": ("ignore", "bypass", "disable", "turn", "override", "circumvent",
                        "deactivate", "remove", "forget", "suspend", "evade", "with", "no"),
    "secret-exfiltration": _SEND_LEADS + _EXPOSE_LEADS + ("what", "cat", "read", "open"),
    "conversation-exfiltration": _SEND_LEADS + ("![", "append", "embed", "encode", "include",
                                                "put"),
}
_UNICODE = frozenset({"invisible-unicode", "unicode-tag-characters", "bidi-control",
                      "variation-selector-smuggling"})
# The rules with a top-level alternative that opens with a literal newline (test_guard.py
# checks this against the patterns): only they need trying at each newline itself.
NEWLINE_OPENS = frozenset({"forged-conversation-turn"})


def _occurrences(view: str | bytes, lead: str) -> list[int]:
    find, out = view.find, []
    needle = lead.encode() if isinstance(view, bytes) else lead
    i = find(needle)
    while i >= 0:
        out.append(i)
        i = find(needle, i + 1)
    return out


def _starts(lead: str, found: list[int]) -> list[int]:
    """Where a match can start, given where @lead occurs: at it, or for a newline also at
    the line's start (and at the start of the text)."""
    if lead != "\n":
        return found
    return [0] + [j for i in found for j in (i, i + 1)]


class Leads:
    """The positions of each lead in one view, found once for all the rules. A view derived
    from another by replacing some of its pieces (an unescaped view's normalized form) takes
    the positions in the pieces it kept from the other's Leads and searches only the rest:
    no lead holds ASCII whitespace but the newline itself, and every piece boundary has some
    on its kept side, so no lead occurrence straddles one."""

    def __init__(self, view: str, base: "Leads | None" = None, parts=None) -> None:
        self.view = view
        self.base = base
        self.raw: dict[str, list[int]] = {}
        self.found: dict[str, list[int]] = {}
        self.searched: str | bytes | None = None
        if base is not None:
            self._split(parts)

    def _split(self, parts) -> None:
        # The kept pieces as (base_start, base_end, shift); the others joined by NULs, which
        # no lead holds, so that one search per lead covers them all.
        self.kept = [(b0, b1, at - b0) for b0, b1, at, part in parts if part is None]
        self.kept_starts = [b0 for b0, _, _ in self.kept]
        joined, offsets, starts, pos = [], [], [], 0
        for _, _, at, part in parts:
            if part is not None:
                joined.append(part)
                offsets.append(pos)
                starts.append(at)
                pos += len(part) + 1
        self.joined = "\0".join(joined)
        self.joined_offsets = offsets
        self.joined_starts = starts

    def occurrences(self, lead: str) -> list[int]:
        if lead not in self.raw:
            self.raw[lead] = (_occurrences(self._haystack(), lead) if self.base is None
                              else self._mapped(lead))
        return self.raw[lead]

    def _haystack(self) -> str | bytes:
        """The view to search for leads: a text with characters past Latin-1 is stored two
        or four bytes a character, and bytes.find goes faster over its ASCII bytes (every
        other character one "?", which no lead holds, so the positions are the same)."""
        if self.searched is None:
            v = self.view
            self.searched = v if v.isascii() else v.encode("ascii", "replace")
        return self.searched

    def _mapped(self, lead: str) -> list[int]:
        base = self.base.occurrences(lead)
        out: list[int] = []
        if len(base) < len(self.kept):
            for i in base:
                k = bisect_right(self.kept_starts, i) - 1
                if k >= 0 and i < self.kept[k][1]:
                    out.append(i + self.kept[k][2])
        else:
            for b0, b1, shift in self.kept:
                lo = bisect_left(base, b0)
                hi = bisect_left(base, b1, lo)
                out += [i + shift for i in base[lo:hi]]
        for j in _occurrences(self.joined, lead):
            k = bisect_right(self.joined_offsets, j) - 1
            out.append(j - self.joined_offsets[k] + self.joined_starts[k])
        return out

    def __getitem__(self, lead: str) -> list[int]:
        if lead not in self.found:
            self.found[lead] = _starts(lead, self.occurrences(lead))
        return self.found[lead]


class TextRule:
    """A built-in rule's pattern, compiled for case-folded text, tried at its leads. The
    newline lead is not tried one position at a time (a MiB of markdown has some 20,000
    lines): two searches that open with a literal newline, which the regex engine skips to
    in C, try the pattern at each newline and just after it."""

    def __init__(self, rule: Rule) -> None:
        self.rule = rule
        # Without its leading word boundaries: "Hi" followed by smuggled tag characters
        # reads "hiignore all previous ...", which must still match.
        body = rule.pattern.replace(r"|\b", "|")
        self.compiled = re.compile(body[2:] if body.startswith(r"\b") else body)
        self.leads = LEADS[rule.id]
        self.words = tuple(lead for lead in self.leads if lead != "\n")
        self.lines = None
        if "\n" in LEADS[rule.id]:
            flags = self.compiled.flags
            if body.startswith("(?m)"):
                body, flags = body[4:], flags | re.MULTILINE
            # After a newline; and at one, for a pattern with an alternative that opens with
            # a newline: the lookbehind steps back onto the newline and looks ahead for the
            # pattern from there. (A "^" alternative at a newline that starts a line is the
            # same try as just after the newline before it.)
            self.lines = (re.compile(rf"\n(?:{body})", flags),)
            if rule.id in NEWLINE_OPENS:
                self.lines += (re.compile(rf"\n(?<=(?=(?:{body}))\n)", flags),)

    def search(self, leads: Leads) -> bool:
        match, view = self.compiled.match, leads.view
        if self.lines is not None and (match(view, 0)
                                       or any(p.search(view) for p in self.lines)):
            return True
        return any(match(view, i) for lead in self.words for i in leads[lead])


TEXT_RULES = tuple(TextRule(r) for r in BUILTIN_RULES if r.id not in _UNICODE)
UNICODE_RULES = tuple((r, r.compiled) for r in BUILTIN_RULES if r.id in _UNICODE)
# Every character the Unicode rules look for: one search for these decides whether a view needs
# them at all (the invisible-unicode pattern's lookarounds are slow on a MiB that has none).
UNICODE_SUSPECTS = re.compile(rf"[{_HIDDEN}{VARIATION_SELECTORS}\u061c\u200e\u200f\u202a-\u202e"
                              rf"\u2066-\u2069\U000e0000-\U000e007f]")
SUSPECT_BLOCK = 1024


def has_suspects(view: str) -> bool:
    """Whether @view holds a character that a Unicode rule looks for. The search runs over
    the blocks of SUSPECT_BLOCK characters that are not all ASCII (in most texts, a few)."""
    if view.isascii():
        return False
    search, n = UNICODE_SUSPECTS.search, len(view)
    for start in range(0, n, SUSPECT_BLOCK):
        end = start + SUSPECT_BLOCK
        if not view[start:end].isascii() and search(view, start, end) is not None:
            return True
    return False
