#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A lint of the shell tests' TAP checks (tests/lib/tap.sh): checks that
cannot fail.

    lint-tap.py FILE...

Prints FILE:LINE: WHAT for each finding and exits 1 if there is one.  It
flags:

 (a) an unconditional `pass DESC` or `ok 0 DESC`: one that is not inside an
     if/elif/else branch or a case arm and does not follow && or || (a
     pass after a loop that may have failed reports success whatever the
     loop found).  A line that is a deliberate exception carries a trailing
     comment `# lint: ok (REASON)`; a fact that cannot fail is a `note`;
 (b) a comparison of a value with itself: `is A B`, `isnt A B` or
     `cmp_ok A OP B` where A and B are the same text once quotes are
     dropped, or where one of them falls back to the other
     (`$(cat f || cat g)` against `$(cat g)`, `${v:-$w}` against `$w`).

The shell is read by a small lexer (quotes, $(...), ${...}, $((...)),
here-documents, comments, line continuations) and the block structure
(if, case, loops, braces, subshells) is followed; commands inside $(...)
are not checked.
"""
import re
import sys

OPS = ["<<<", "<<-", ";;&", "&>>", "&&", "||", ";;", ";&", "|&", "<<", ">>", ">&", "<&",
       ">|", "&>", "<>", ";", "|", "&", "(", ")", "<", ">"]
REDIRS = {"<<<", "<<-", "<<", ">>", ">&", "<&", ">|", "&>", "&>>", "<>", "<", ">"}
SEPARATORS = {";", "&", ";;", ";&", ";;&", "&&", "||", "|", "|&", "nl"}
EXEMPT = re.compile(r"#\s*lint:\s*ok\s*\(\s*[^)\s][^)]*\)")


class Lexer:
    """Tokens of a shell script: ("word", RAW, LINE), ("op", OP, LINE) and
    ("op", "nl", LINE) for a newline.  RAW keeps the word's quotes."""

    def __init__(self, text):
        self.s = text
        self.i = 0
        self.line = 1
        self.pending = []  # here-documents whose bodies follow the next newline
        self.comments = {}  # line -> comment text

    def peek(self, k=0):
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def adv(self, n=1):
        for _ in range(n):
            if self.i < len(self.s):
                if self.s[self.i] == "\n":
                    self.line += 1
                self.i += 1

    def heredoc_bodies(self):
        for delim, strip in self.pending:
            while self.i < len(self.s):
                end = self.s.find("\n", self.i)
                if end < 0:
                    end = len(self.s)
                text = self.s[self.i:end]
                self.adv(end - self.i + 1)
                if (text.lstrip("\t") if strip else text) == delim:
                    break
        self.pending = []

    def tokens(self, in_subst=False):
        """Tokens up to the end, or (in_subst) up to the ) closing a $(."""
        out = []
        depth = 0
        case_depth = 0
        want_delim = None
        while self.i < len(self.s):
            c = self.peek()
            if c in " \t":
                self.adv()
                continue
            if c == "\\" and self.peek(1) == "\n":
                self.adv(2)
                continue
            if c == "\n":
                out.append(("op", "nl", self.line))
                self.adv()
                if self.pending:
                    self.heredoc_bodies()
                continue
            if c == "#":
                end = self.s.find("\n", self.i)
                if end < 0:
                    end = len(self.s)
                self.comments[self.line] = self.s[self.i:end]
                self.adv(end - self.i)
                continue
            if self.s.startswith("((", self.i):  # an arithmetic command
                line = self.line
                out.append(("word", self.word(), line))
                continue
            op = next((o for o in OPS if self.s.startswith(o, self.i)), None)
            if op and op in "<>" and self.peek(1) == "(":
                op = None  # a process substitution: a word
            if op:
                line = self.line
                self.adv(len(op))
                if op == "(":
                    depth += 1
                elif op == ")":
                    if in_subst and depth == 0 and case_depth == 0:
                        return out
                    if depth > 0:
                        depth -= 1
                if op in ("<<", "<<-"):
                    want_delim = op
                out.append(("op", op, line))
                continue
            line = self.line
            raw = self.word()
            if want_delim:
                delim = re.sub(r"[\"'\\]", "", raw)
                self.pending.append((delim, want_delim == "<<-"))
                want_delim = None
            if in_subst:
                if raw == "case":
                    case_depth += 1
                elif raw == "esac" and case_depth:
                    case_depth -= 1
            out.append(("word", raw, line))
        return out

    def subst(self):
        """After "$(" (or "<("): the substitution's text up to its ")"."""
        start = self.i
        self.tokens(in_subst=True)
        return self.s[start:self.i]

    def balanced(self, open_, close):
        """After an opening bracket: up to its match, quotes respected."""
        start = self.i
        level = 1
        while self.i < len(self.s) and level:
            c = self.peek()
            if c == "\\":
                self.adv(2)
                continue
            if c in "'\"":
                self.quoted()
                continue
            if c == "$" and self.peek(1) == "(" and open_ != "(":
                self.adv(2)
                self.subst()
                continue
            if c == open_:
                level += 1
            elif c == close:
                level -= 1
            self.adv()
        return self.s[start:self.i]

    def quoted(self):
        q = self.peek()
        self.adv()
        if q == "'":
            while self.i < len(self.s) and self.peek() != "'":
                self.adv()
            self.adv()
            return
        while self.i < len(self.s) and self.peek() != '"':
            self.dollar_or_char(in_dq=True)
        self.adv()

    def dollar_or_char(self, in_dq=False):
        c = self.peek()
        if c == "\\":
            self.adv(2)
        elif c == "$" and self.s.startswith("$((", self.i):
            self.adv(3)
            self.balanced("(", ")")
            self.adv()  # the second )
        elif c == "$" and self.peek(1) == "(":
            self.adv(2)
            self.subst()
        elif c == "$" and self.peek(1) == "{":
            self.adv(2)
            self.balanced("{", "}")
        elif c == "`":
            self.adv()
            while self.i < len(self.s) and self.peek() != "`":
                self.adv(2 if self.peek() == "\\" else 1)
            self.adv()
        elif c in "'\"" and not in_dq:
            self.quoted()
        else:
            self.adv()

    def word(self):
        start = self.i
        if self.s.startswith("((", self.i):  # arithmetic command, for ((...))
            self.adv(2)
            self.balanced("(", ")")
            self.adv()
            return self.s[start:self.i]
        while self.i < len(self.s):
            c = self.peek()
            if c in " \t\n":
                break
            if c == "\\" and self.peek(1) == "\n":
                break
            if c in "<>" and self.peek(1) == "(":
                self.adv(2)
                self.subst()
                continue
            if c in ";&|()<>":
                break
            self.dollar_or_char()
        return self.s[start:self.i]


def split_top(text, sep):
    """TEXT split at SEP where SEP is outside quotes and brackets."""
    parts, level, q, cur, i = [], 0, "", "", 0
    while i < len(text):
        c = text[i]
        if q:
            if c == "\\" and q == '"':
                cur += text[i:i + 2]
                i += 2
                continue
            if c == q:
                q = ""
        elif c in "'\"":
            q = c
        elif c in "({":
            level += 1
        elif c in ")}":
            level -= 1
        elif level == 0 and text.startswith(sep, i):
            parts.append(cur)
            cur = ""
            i += len(sep)
            continue
        cur += c
        i += 1
    parts.append(cur)
    return parts


def norm(w):
    """A word without its quotes, blanks collapsed."""
    return " ".join(re.sub(r"(?<!\\)[\"']", "", w).split())


def alternatives(w):
    """The values WORD may take: itself, and the value it falls back to
    (not a constant default: `${n:-0}` against 0 is a real check)."""
    n = norm(w)
    alts = {n}
    m = re.fullmatch(r"\$\((.*)\)", n, re.S)
    if m and not n.startswith("$(("):
        for part in split_top(m.group(1), "||")[1:]:
            part = re.sub(r"\s*\d?>\s*/dev/null", "", part).strip()
            alts.add("$(" + " ".join(part.split()) + ")")
    m = re.fullmatch(r"\$\{\w+:?-(.*)\}", n, re.S)
    if m and "$" in m.group(1):
        alts.add(m.group(1))
    return alts


def same_value(a, b, fallback=True):
    """A and B are the same text, or (FALLBACK) one may fall back to the
    other: a check for equality that then passes whatever A's source did."""
    if norm(a) == norm(b):
        return True
    return fallback and bool(alternatives(a) & alternatives(b))


class Checker:
    def __init__(self, path, text):
        self.path = path
        self.lx = Lexer(text)
        self.toks = self.lx.tokens()
        self.found = []

    def exempt(self, first, last):
        return any(EXEMPT.search(self.lx.comments.get(n, "")) for n in range(first, last + 1))

    def flag(self, first, last, what):
        if not self.exempt(first, last):
            self.found.append((first, what))

    def command(self, words, lines, prev_op, stack):
        if not words:
            return
        name = norm(words[0])
        first, last = lines[0], lines[-1]
        cond = any(s in ("if", "case") for s in stack) or prev_op in ("&&", "||")
        if name == "pass" or (name == "ok" and len(words) > 1 and norm(words[1]) == "0"):
            if not cond:
                self.flag(first, last, f"unconditional `{'pass' if name == 'pass' else 'ok 0'}`:"
                          " a check that cannot fail (make it depend on what it checks, or a note)")
        elif name in ("is", "isnt") and len(words) > 2:
            # isnt A A always fails: broken too, but a fallback makes it fail
            if same_value(words[1], words[2], fallback=name == "is"):
                self.flag(first, last, f"`{name}` compares a value with itself: "
                          f"{norm(words[1])} vs {norm(words[2])}")
        elif name == "cmp_ok" and len(words) > 3:
            if same_value(words[1], words[3],
                          fallback=norm(words[2]) in ("==", "<=", ">=", "-eq", "-le", "-ge")):
                self.flag(first, last, f"`cmp_ok` compares a value with itself: "
                          f"{norm(words[1])} vs {norm(words[3])}")

    def run(self):
        stack = []
        words, lines = [], []
        prev_op = None
        case_state = None  # "header" (case WORD ... in), "pattern" (up to its ")")
        skip_until_sep = False  # the rest of a for/select header, a word after fi/done/}
        skip_word = False  # a redirection's target, a function keyword's name
        func_paren = False
        for kind, val, line in self.toks:
            if kind == "op":
                if val in SEPARATORS:
                    self.command(words, lines, prev_op, stack)
                    if val == "nl" and not words and prev_op in ("&&", "||", "|", "|&"):
                        pass  # a newline after && or || continues the list
                    else:
                        prev_op = val
                    words, lines = [], []
                    skip_until_sep = False
                    skip_word = False
                    if val in (";;", ";&", ";;&") and stack and stack[-1] == "case":
                        case_state = "pattern"
                elif val == "(":
                    if case_state == "pattern":
                        continue
                    if words:  # NAME ( ): a function definition
                        words, lines = [], []
                        func_paren = True
                        continue
                    stack.append("subshell")
                    prev_op = "("
                elif val == ")":
                    if case_state == "pattern":
                        case_state = None
                        prev_op = ")"
                    elif func_paren:
                        func_paren = False
                    elif stack and stack[-1] == "subshell":
                        self.command(words, lines, prev_op, stack)
                        words, lines = [], []
                        stack.pop()
                        skip_until_sep = True
                elif val in REDIRS:
                    skip_word = True
                continue
            if skip_word:
                skip_word = False
                continue
            if skip_until_sep:
                continue
            w = norm(val)
            if case_state == "header":
                if w == "in":
                    case_state = "pattern"
                continue
            if case_state == "pattern":
                if w == "esac":
                    case_state = None
                    if stack and stack[-1] == "case":
                        stack.pop()
                    skip_until_sep = True
                continue
            if not words and val == w:  # a reserved word, unquoted, where a command starts
                if w in ("if", "while", "until"):
                    stack.append("if" if w == "if" else "loop")
                    prev_op = w
                    continue
                if w in ("then", "do", "else", "elif", "!", "time"):
                    prev_op = w
                    continue
                if w in ("fi", "done", "}", "esac"):
                    want = {"fi": "if", "done": "loop", "}": "brace", "esac": "case"}[w]
                    if stack and stack[-1] == want:
                        stack.pop()
                    skip_until_sep = True
                    continue
                if w == "{":
                    stack.append("brace")
                    func_paren = False
                    prev_op = "{"
                    continue
                if w == "case":
                    stack.append("case")
                    case_state = "header"
                    continue
                if w in ("for", "select"):
                    stack.append("loop")
                    skip_until_sep = True
                    continue
                if w == "function":
                    skip_word = True
                    continue
            words.append(val)
            lines.append(line)
        self.command(words, lines, prev_op, stack)
        return self.found


def main(argv):
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    bad = 0
    for path in argv:
        try:
            text = open(path, encoding="utf-8").read()
        except OSError as e:
            print(f"{path}: {e.strerror}")
            bad = 1
            continue
        for line, what in Checker(path, text).run():
            print(f"{path}:{line}: {what}")
            bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
