"""Source text of small candidate assignors that tests write into a temporary module and load by name.

``GOOD_AND_DUP``: ``good`` (least-loaded, sorted, a heap per topic so it keeps within the scale tier's budget: valid) and ``dup`` (``good`` with one partition given to
a second member as well: breaks I2, exclusive assignment). Tests append their own candidates to it.
"""
import textwrap

GOOD_AND_DUP = textwrap.dedent('''
    def good(ppt, subs):
        import heapq
        out = {m: [] for m in subs}
        ms = sorted(subs)
        for t in sorted({t for s in subs.values() for t in s["topics"]}):
            heap = [(len(out[m]), m) for m in ms if t in subs[m]["topics"]]  # least loaded first, then by id
            heapq.heapify(heap)
            for p in range(ppt.get(t, 0)):
                n, who = heapq.heappop(heap)
                out[who].append((t, p))
                heapq.heappush(heap, (n + 1, who))
        return out

    def dup(ppt, subs):
        out = good(ppt, subs)
        full = [m for m in out if out[m]]
        if full and len(out) > 1:
            other = [m for m in out if m != full[0]][0]
            out[other].append(out[full[0]][0])
        return out
''')
