#!/usr/bin/env python3
"""Writes the document-format fixtures of tests/corpus/extract_formats_test.cpp
and tests/e2e/test_documents_formats.py, with the standard library only.

Run once from this folder; the outputs are committed:

  sample.docx   WordprocessingML: a Title paragraph, headings through a
                localized style id ("Berschrift1", named "heading 1" in
                styles.xml) and a built-in one ("Heading2"), a paragraph
                with an outline level, a table, a tab, a deleted revision
                and a field code (both left out), core.xml title.
  sample.odt    OpenDocument text: text:h levels, a list, a table, text:s
                runs of spaces, meta.xml title; "mimetype" stored first.
  sample.pptx   PresentationML: two slides whose presentation order
                (sldIdLst) is the reverse of their file names, titles in
                title placeholders, a table in a graphic frame.
  sample.epub   EPUB 3: container.xml -> OEBPS/content.opf, two XHTML
                chapters in spine order, dc:title.
  bomb.docx     a DOCX whose document.xml unpacks to 4 MiB of one paragraph
                (about 8 KB packed): refused under a small unpacking limit.
  xxe.docx      a DOCX whose document.xml refers to an external entity
                (file:///etc/hostname), which must not be fetched.
  laughs.docx   a DOCX with nested entities ("billion laughs", small), which
                must not be expanded.
  sheet.xlsx    a spreadsheet (refused: not a supported format).
  sample.csv    RFC 4180 CSV: quoted separators, quotes and a line break.
  utf16le.txt, utf16be.txt   UTF-16 text with a byte order mark.
  cp1252.txt    Windows-1252 text (curly quotes, euro sign, accents).

ZIP entries carry a fixed date so that the files are the same on every run.
"""
import zipfile

DATE = (2024, 1, 1, 0, 0, 0)
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
DC = ('xmlns:dc="http://purl.org/dc/elements/1.1/" '
      'xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties"')


def write_zip(path, entries):
    """entries: (name, text or bytes, stored?) in archive order."""
    with zipfile.ZipFile(path, "w") as z:
        for name, data, stored in entries:
            info = zipfile.ZipInfo(name, DATE)
            info.compress_type = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
            z.writestr(info, data.encode("utf-8") if isinstance(data, str) else data)


def core(title):
    return f'<?xml version="1.0" encoding="UTF-8"?><cp:coreProperties {DC}><dc:title>{title}</dc:title></cp:coreProperties>'


def docx_parts(body, styles=None, title=None):
    parts = [
        ("[Content_Types].xml", '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
         'content-types"><Default Extension="xml" ContentType="application/xml"/></Types>', False),
        ("word/document.xml", f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
         f'<w:document xmlns:w="{W}"><w:body>{body}</w:body></w:document>', False),
    ]
    if styles:
        parts.append(("word/styles.xml", f'<?xml version="1.0"?><w:styles xmlns:w="{W}">{styles}</w:styles>', False))
    if title:
        parts.append(("docProps/core.xml", core(title), False))
    return parts


def para(text, style=None, outline=None):
    ppr = ""
    if style or outline is not None:
        ppr = "<w:pPr>" + (f'<w:pStyle w:val="{style}"/>' if style else "") + \
              (f'<w:outlineLvl w:val="{outline}"/>' if outline is not None else "") + "</w:pPr>"
    return f'<w:p>{ppr}<w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p>'


def docx():
    styles = ('<w:style w:type="paragraph" w:styleId="Berschrift1"><w:name w:val="heading 1"/></w:style>'
              '<w:style w:type="paragraph" w:styleId="Normal"><w:name w:val="Normal"/></w:style>')
    table = ("<w:tbl>" + "".join(
        "<w:tr>" + "".join(f"<w:tc>{para(c)}</w:tc>" for c in row) + "</w:tr>"
        for row in [["Beacon", "Frequency"], ["Marlowe", "7719 hertz"], ["Kestrel", "4411 hertz"]]) + "</w:tbl>")
    body = (para("Lighthouse Beacons", style="Title")
            + para("Coastal Signals", style="Berschrift1")
            + para("The quillon frequency of the Marlowe beacon is 7719 hertz, set each spring.")
            + '<w:p><w:r><w:t>Left</w:t></w:r><w:r><w:tab/><w:t>Right</w:t></w:r>'
              '<w:del><w:r><w:delText>REMOVED REVISION</w:delText></w:r></w:del>'
              '<w:r><w:instrText> PAGEREF FIELDCODE </w:instrText></w:r></w:p>'
            + para("Maintenance", style="Heading2")
            + para("Clean the lens monthly.")
            + para("Outline Heading", outline=1)
            + table
            + para("After the table."))
    write_zip("sample.docx", docx_parts(body, styles, "Beacon Handbook"))


def odt():
    ns = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
          'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
          'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"')
    content = (f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {ns}><office:body><office:text>'
               '<text:sequence-decls><text:sequence-decl text:name="Figure"/></text:sequence-decls>'
               '<text:h text:outline-level="1">Orchard Guide</text:h>'
               '<text:p>Apples ripen in <text:span>late</text:span> autumn.<text:s text:c="3"/>Pears earlier.</text:p>'
               '<text:h text:outline-level="2">Pruning</text:h>'
               '<text:list><text:list-item><text:p>Cut dead wood</text:p></text:list-item>'
               '<text:list-item><text:p>Open the centre</text:p></text:list-item></text:list>'
               '<table:table><table:table-row><table:table-cell><text:p>Tree</text:p></table:table-cell>'
               '<table:table-cell><text:p>Month</text:p></table:table-cell></table:table-row>'
               '<table:table-row><table:table-cell><text:p>Apple</text:p></table:table-cell>'
               '<table:table-cell><text:p>March</text:p></table:table-cell></table:table-row></table:table>'
               '<text:p>Line one<text:line-break/>Line two<text:tab/>tabbed</text:p>'
               '</office:text></office:body></office:document-content>')
    meta = ('<?xml version="1.0"?><office:document-meta xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
            'xmlns:dc="http://purl.org/dc/elements/1.1/"><office:meta><dc:title>Orchard Notes</dc:title>'
            '</office:meta></office:document-meta>')
    write_zip("sample.odt", [
        ("mimetype", "application/vnd.oasis.opendocument.text", True),
        ("META-INF/manifest.xml", '<?xml version="1.0"?><manifest:manifest '
         'xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"/>', False),
        ("content.xml", content, False),
        ("meta.xml", meta, False),
    ])


def slide(title, body_paragraphs, table=None):
    p = "http://schemas.openxmlformats.org/presentationml/2006/main"
    a = "http://schemas.openxmlformats.org/drawingml/2006/main"
    shapes = ""
    if title:
        shapes += ('<p:sp><p:nvSpPr><p:cNvPr id="2" name="Title"/><p:cNvSpPr/><p:nvPr><p:ph type="title"/></p:nvPr>'
                   f'</p:nvSpPr><p:txBody><a:p><a:r><a:t>{title}</a:t></a:r></a:p></p:txBody></p:sp>')
    if body_paragraphs:
        shapes += ('<p:sp><p:nvSpPr><p:cNvPr id="3" name="Body"/><p:cNvSpPr/><p:nvPr><p:ph idx="1"/></p:nvPr>'
                   '</p:nvSpPr><p:txBody>' + "".join(f"<a:p><a:r><a:t>{t}</a:t></a:r></a:p>" for t in body_paragraphs)
                   + "</p:txBody></p:sp>")
    if table:
        shapes += ('<p:graphicFrame><a:graphic><a:graphicData><a:tbl>' + "".join(
            "<a:tr>" + "".join(f"<a:tc><a:txBody><a:p><a:r><a:t>{c}</a:t></a:r></a:p></a:txBody></a:tc>" for c in row)
            + "</a:tr>" for row in table) + "</a:tbl></a:graphicData></a:graphic></p:graphicFrame>")
    return (f'<?xml version="1.0" encoding="UTF-8"?><p:sld xmlns:p="{p}" xmlns:a="{a}"><p:cSld><p:spTree>'
            f'{shapes}</p:spTree></p:cSld></p:sld>')


def pptx():
    r = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    presentation = ('<?xml version="1.0"?><p:presentation xmlns:p="http://schemas.openxmlformats.org/presentationml/'
                    f'2006/main" xmlns:r="{r}"><p:sldIdLst><p:sldId id="256" r:id="rId7"/>'
                    '<p:sldId id="257" r:id="rId3"/></p:sldIdLst></p:presentation>')
    rels = ('<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="rId3" Type="slide" Target="slides/slide1.xml"/>'
            '<Relationship Id="rId7" Type="slide" Target="slides/slide2.xml"/></Relationships>')
    write_zip("sample.pptx", [
        ("[Content_Types].xml", '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
         'content-types"/>', False),
        ("ppt/presentation.xml", presentation, False),
        ("ppt/_rels/presentation.xml.rels", rels, False),
        ("ppt/slides/slide1.xml", slide("Results", ["Yield rose by a third."], [["Year", "Tons"], ["2023", "41"]]),
         False),
        ("ppt/slides/slide2.xml", slide("Quarterly Review", ["Opening remarks", "Agenda for the day"]), False),
        ("docProps/core.xml", core("Review Deck"), False),
    ])


def epub():
    chapter = ('<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head>'
               '<title>{t}</title></head><body><h1>{t}</h1><p>{p}</p></body></html>')
    opf = ('<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
           '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Tides of the North</dc:title></metadata>'
           '<manifest><item id="c2" href="text/ch%202.xhtml" media-type="application/xhtml+xml"/>'
           '<item id="c1" href="text/ch1.xhtml" media-type="application/xhtml+xml"/></manifest>'
           '<spine><itemref idref="c1"/><itemref idref="c2"/></spine></package>')
    write_zip("sample.epub", [
        ("mimetype", "application/epub+zip", True),
        ("META-INF/container.xml", '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:'
         'opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" '
         'media-type="application/oebps-package+xml"/></rootfiles></container>', False),
        ("OEBPS/content.opf", opf, False),
        ("OEBPS/text/ch1.xhtml", chapter.format(t="Spring Tides", p="The moon pulls hardest at new moon."), False),
        ("OEBPS/text/ch 2.xhtml", chapter.format(t="Neap Tides", p="Quarter moons bring the smallest range."), False),
    ])


def hostile():
    write_zip("bomb.docx", docx_parts(para("x" * (4 << 20))))
    for path, text, doctype in [
            ("xxe.docx", "Safe text &ext;", '<!DOCTYPE w:document [<!ENTITY ext SYSTEM "file:///etc/hostname">]>'),
            ("laughs.docx", "Safe text &lol3;",
             '<!DOCTYPE w:document [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">'
             '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>')]:
        parts = docx_parts(para(text))
        name, data, stored = parts[1]
        parts[1] = (name, data.replace('standalone="yes"?>', 'standalone="yes"?>' + doctype), stored)
        write_zip(path, parts)
    write_zip("sheet.xlsx", [("[Content_Types].xml", "<Types/>", False), ("xl/workbook.xml", "<workbook/>", False)])


def text_files():
    with open("sample.csv", "wb") as f:
        f.write(b'name,city,note\r\nAda,"London, UK","said ""hello"""\r\nGrace,Arlington,"two\r\nlines"\r\n'
                b'Linus,,\r\n')
    text = "Caf\u00e9 na\u00efve r\u00e9sum\u00e9 \u2014 the \u201cquoted\u201d price is 5 \u20ac.\n"
    with open("utf16le.txt", "wb") as f:
        f.write(b"\xff\xfe" + text.encode("utf-16-le"))
    with open("utf16be.txt", "wb") as f:
        f.write(b"\xfe\xff" + text.encode("utf-16-be"))
    with open("cp1252.txt", "wb") as f:
        f.write(text.encode("cp1252"))


if __name__ == "__main__":
    docx()
    odt()
    pptx()
    epub()
    hostile()
    text_files()
