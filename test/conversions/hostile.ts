/**
 * Documents that name outside resources, for the converter isolation tests: every way a document
 * makes LibreOffice fetch a URL or read a local file that we know of, each pointing at `base` (a
 * loopback listener) or at /etc/passwd. Each also carries a visible marker text, so a test can tell
 * that the document itself still converted.
 */
import yazl from 'yazl';

export interface Hostile {
  name: string;
  data: Buffer;
  /** Text the converted document shows (the document's own content). */
  marker: string;
}

async function zip(entries: Array<{ name: string; text: string; store?: boolean }>): Promise<Buffer> {
  const z = new yazl.ZipFile();
  for (const e of entries) z.addBuffer(Buffer.from(e.text), e.name, { compress: !e.store });
  z.end();
  const chunks: Buffer[] = [];
  for await (const c of z.outputStream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

function html(base: string): Hostile {
  const marker = 'HTMLMARKER';
  const text = `<!DOCTYPE html><html><head><link rel="stylesheet" href="${base}/html.css"></head><body>
<p>${marker}</p>
<img src="${base}/html-img.png" width="20" height="20"><img src="file:///etc/passwd">
<iframe src="${base}/html-frame.html"></iframe><iframe src="file:///etc/passwd"></iframe>
<object data="${base}/html-object.txt" type="text/plain"></object>
<embed src="${base}/html-embed.txt" type="text/plain">
</body></html>`;
  return { name: 'hostile.html', data: Buffer.from(text), marker };
}

const ODF_NS = 'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"';

/** Section sources, a linked image and a linked OLE object: the body of an ODT or FODT. */
function odfBody(base: string, marker: string): string {
  return `<office:body><office:text>
<text:p>${marker}</text:p>
<text:section text:name="S1"><text:section-source xlink:href="${base}/odf-section.html" xlink:type="simple" text:filter-name="HTML (StarWriter)"/></text:section>
<text:section text:name="S2"><text:section-source xlink:href="file:///etc/passwd" xlink:type="simple" text:filter-name="Text"/></text:section>
<text:p><draw:frame draw:name="I1" text:anchor-type="as-char" svg:width="2cm" svg:height="2cm"><draw:image xlink:href="${base}/odf-image.png" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/></draw:frame></text:p>
<text:p><draw:frame draw:name="O1" text:anchor-type="as-char" svg:width="2cm" svg:height="2cm"><draw:object xlink:href="${base}/odf-object" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/></draw:frame></text:p>
<text:p><text:a xlink:type="simple" xlink:href="${base}/odf-link">a plain hyperlink</text:a></text:p>
</office:text></office:body>`;
}

/**
 * A flat ODT. With an XML declaration it sniffs as application/xml, which is not converted; without
 * one it is text, and LibreOffice, given it as a .txt, may still recognise it by its content.
 */
function fodt(base: string): Hostile {
  const marker = 'FODTMARKER';
  const text = `<office:document ${ODF_NS} office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.text">${odfBody(base, marker)}</office:document>`;
  return { name: 'hostile-fodt.txt', data: Buffer.from(text), marker };
}

async function odt(base: string): Promise<Hostile> {
  const marker = 'ODTMARKER';
  const content = `<?xml version="1.0" encoding="UTF-8"?><office:document-content ${ODF_NS} office:version="1.2">${odfBody(base, marker)}</office:document-content>`;
  const manifest = '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2"><manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.text"/><manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>';
  const data = await zip([
    { name: 'mimetype', text: 'application/vnd.oasis.opendocument.text', store: true },
    { name: 'META-INF/manifest.xml', text: manifest },
    { name: 'content.xml', text: content },
  ]);
  return { name: 'hostile.odt', data, marker };
}

const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office" xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

/** Fields in a DOCX body: a field code whose result LibreOffice may refresh from the source. */
const field = (code: string): string => `<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve"> ${code} </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>old</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>`;

async function docx(base: string): Promise<Hostile> {
  const marker = 'DOCXMARKER';
  const picture = (rid: string): string => `<w:p><w:r><w:drawing><wp:inline><wp:extent cx="190500" cy="190500"/><wp:docPr id="${rid.length}" name="p${rid}"/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic><pic:nvPicPr><pic:cNvPr id="0" name="x.png"/><pic:cNvPicPr/></pic:nvPicPr><pic:blipFill><a:blip r:link="${rid}"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill><pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="190500" cy="190500"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>`;
  const ole = `<w:p><w:r><w:object><v:shape id="ole1" style="width:20pt;height:20pt"><v:imagedata r:id="rIdOleImg"/></v:shape><o:OLEObject Type="Link" ProgID="Word.Document.8" ShapeID="ole1" DrawAspect="Content" r:id="rIdOle" UpdateMode="Always"><o:LinkType>EnhancedMetaFile</o:LinkType></o:OLEObject></w:object></w:r></w:p>`;
  const body = `<w:p><w:r><w:t>${marker}</w:t></w:r></w:p>${picture('rIdImg')}${picture('rIdPasswd')}`
    + field(`INCLUDEPICTURE "${base}/docx-includepicture.png" \\d`)
    + field(`INCLUDETEXT "${base}/docx-includetext.txt"`)
    + field('INCLUDETEXT "/etc/passwd"')
    + ole;
  const document = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document ${W}><w:body>${body}<w:sectPr/></w:body></w:document>`;
  const rel = (id: string, type: string, target: string): string => `<Relationship Id="${id}" Type="${REL}/${type}" Target="${target}" TargetMode="External"/>`;
  const docRels = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${rel('rIdImg', 'image', `${base}/docx-image.png`)}${rel('rIdPasswd', 'image', 'file:///etc/passwd')}${rel('rIdOle', 'oleObject', `${base}/docx-ole.doc`)}${rel('rIdOleImg', 'image', `${base}/docx-ole-image.emf`)}<Relationship Id="rIdSettings" Type="${REL}/settings" Target="settings.xml"/></Relationships>`;
  const settings = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:settings ${W}><w:attachedTemplate r:id="rIdTpl"/><w:linkStyles/></w:settings>`;
  const settingsRels = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${rel('rIdTpl', 'attachedTemplate', `${base}/docx-template.dotx`)}</Relationships>`;
  const types = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/settings.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.settings+xml"/></Types>';
  const rootRels = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="word/document.xml"/></Relationships>`;
  const data = await zip([
    { name: '[Content_Types].xml', text: types },
    { name: '_rels/.rels', text: rootRels },
    { name: 'word/document.xml', text: document },
    { name: 'word/_rels/document.xml.rels', text: docRels },
    { name: 'word/settings.xml', text: settings },
    { name: 'word/_rels/settings.xml.rels', text: settingsRels },
  ]);
  return { name: 'hostile.docx', data, marker };
}

function rtf(base: string): Hostile {
  const marker = 'RTFMARKER';
  const fieldOf = (code: string): string => `{\\field{\\*\\fldinst {${code}}}{\\fldrslt {old}}}`;
  const text = `{\\rtf1\\ansi\\deff0{\\fonttbl{\\f0 Helvetica;}}\\f0\\fs24 ${marker}\\par
${fieldOf(`INCLUDEPICTURE "${base}/rtf-includepicture.png" \\\\d`)}\\par
${fieldOf(`INCLUDETEXT "${base}/rtf-includetext.txt"`)}\\par
${fieldOf('INCLUDETEXT "/etc/passwd"')}\\par
${fieldOf(`HYPERLINK "${base}/rtf-hyperlink"`)}\\par
{\\object\\objautlink\\rsltpict{\\*\\objclass Word.Document.8}{\\*\\objdata 0105000002000000}{\\*\\result {old}}}\\par
}`;
  return { name: 'hostile.rtf', data: Buffer.from(text), marker };
}

function csv(base: string): Hostile {
  const marker = 'CSVMARKER';
  const text = `name,value\n${marker},1\nweb,"=WEBSERVICE(""${base}/csv-webservice"")"\nxml,"=FILTERXML(WEBSERVICE(""${base}/csv-filterxml""),""//a"")"\nfile,"=WEBSERVICE(""file:///etc/passwd"")"\n`;
  return { name: 'hostile.csv', data: Buffer.from(text), marker };
}

/** Every hostile document, pointing at `base` (`http://127.0.0.1:PORT`). */
export async function hostileDocuments(base: string): Promise<Hostile[]> {
  return [html(base), fodt(base), await odt(base), await docx(base), rtf(base), csv(base)];
}

/**
 * A DOCX of 841 KB or so that expands to millions of paragraphs: LibreOffice's memory grows for as
 * long as it lays them out. The body streams through yazl's deflate in pieces.
 */
export async function zipBombDocx(paragraphs: number): Promise<Buffer> {
  const { Readable } = await import('node:stream');
  const z = new yazl.ZipFile();
  z.addBuffer(Buffer.from('<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'), '[Content_Types].xml');
  z.addBuffer(Buffer.from(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="word/document.xml"/></Relationships>`), '_rels/.rels');
  const piece = Buffer.from('<w:p><w:r><w:t>x</w:t></w:r></w:p>'.repeat(10_000));
  const pieces = Math.ceil(paragraphs / 10_000);
  function* body(): Generator<Buffer> {
    yield Buffer.from(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document ${W}><w:body>`);
    for (let i = 0; i < pieces; i++) yield piece;
    yield Buffer.from('<w:sectPr/></w:body></w:document>');
  }
  z.addReadStream(Readable.from(body()), 'word/document.xml');
  z.end();
  const chunks: Buffer[] = [];
  for await (const c of z.outputStream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}
