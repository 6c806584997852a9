#!/usr/bin/env python3
"""Writes sample.pdf: a minimal two-page PDF (Helvetica text, Info /Title).

Run once from this folder; the output is committed. Layout follows the PDF 1.4
file structure: header, numbered objects, a cross-reference table with the
byte offset of each object, and a trailer naming the catalog and info dicts.
"""

PAGES = [
    ["Solar Panels Overview", "Photovoltaic cells convert sunlight into electricity."],
    ["Maintenance", "Clean the panels twice a year with soft water."],
]


def content_stream(lines):
    ops = ["BT", "/F1 14 Tf", "72 720 Td", "18 TL"]
    for line in lines:
        ops.append("(%s) Tj T*" % line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)"))
    ops.append("ET")
    return "\n".join(ops).encode("latin-1")


def main():
    objects = []  # object bodies; object n is objects[n - 1]
    n_pages = len(PAGES)
    # 1 catalog, 2 pages tree, 3 font, 4 info, then page/content pairs.
    page_ids = [5 + 2 * i for i in range(n_pages)]
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = " ".join("%d 0 R" % p for p in page_ids)
    objects.append(("<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, n_pages)).encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    objects.append(b"<< /Title (Solar Handbook) /Producer (make_pdf.py) >>")
    for i, lines in enumerate(PAGES):
        stream = content_stream(lines)
        objects.append(("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                        "/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (page_ids[i] + 1)).encode())
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    with open("sample.pdf", "wb") as f:
        f.write(pdf_bytes(objects, info=4))


def pdf_bytes(objects, info=None):
    """The PDF file of `objects` (bodies of objects 1..n; 1 is the catalog),
    with the cross-reference table and trailer; `info` numbers the Info dict."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for n, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    info_ref = b" /Info %d 0 R" % info if info else b""
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, info_ref, xref)
    return bytes(out)


if __name__ == "__main__":
    main()
