/** S3's XML: answers built as text (escaped), request bodies (Delete, CompleteMultipartUpload) read with saxes. */
import type http from 'node:http';
import { SaxesParser } from 'saxes';
import { escapeXml, s3Error } from '../http/s3/errors.js';

export const S3_NS = 'http://s3.amazonaws.com/doc/2006-03-01/';

/** `<name>text</name>`, the text escaped. */
export const el = (name: string, text: string | number | boolean): string => `<${name}>${escapeXml(String(text))}</${name}>`;

/** A whole document: the root element with S3's namespace around already built children. */
export const doc = (root: string, children: string): string => `<?xml version="1.0" encoding="UTF-8"?>\n<${root} xmlns="${S3_NS}">${children}</${root}>`;

export function sendXml(res: http.ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  const bytes = Buffer.from(body, 'utf8');
  res.writeHead(status, { ...headers, 'content-type': 'application/xml', 'content-length': bytes.length }).end(bytes);
}

/** An element of a request body: its name, text and child elements. */
export interface XmlNode {
  name: string;
  text: string;
  children: XmlNode[];
}

const malformedXml = () => s3Error(400, 'MalformedXML', 'The XML you provided was not well-formed or did not validate against our published schema.');

/** Reads a bounded request body and parses it; a body over `maxBytes` or not well-formed is a 400. */
export async function readXmlBody(req: http.IncomingMessage, maxBytes: number): Promise<XmlNode> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw s3Error(400, 'MaxMessageLengthExceeded', 'Your request was too big.');
    chunks.push(chunk as Buffer);
  }
  return parseXml(Buffer.concat(chunks).toString('utf8'));
}

export function parseXml(text: string): XmlNode {
  const parser = new SaxesParser({ xmlns: false });
  const root: XmlNode = { name: '', text: '', children: [] };
  const stack: XmlNode[] = [root];
  parser.on('opentag', (tag) => {
    // Namespace prefixes (`s3:Key`) are dropped: the local name is what S3 reads.
    const node: XmlNode = { name: tag.name.replace(/^.*:/, ''), text: '', children: [] };
    (stack[stack.length - 1] as XmlNode).children.push(node);
    stack.push(node);
  });
  parser.on('text', (t) => {
    (stack[stack.length - 1] as XmlNode).text += t;
  });
  parser.on('closetag', () => void stack.pop());
  try {
    parser.write(text).close();
  } catch {
    throw malformedXml();
  }
  const top = root.children[0];
  if (!top) throw malformedXml();
  return top;
}

export const child = (node: XmlNode, name: string): XmlNode | undefined => node.children.find((c) => c.name === name);
export const childrenNamed = (node: XmlNode, name: string): XmlNode[] => node.children.filter((c) => c.name === name);

export function requireRoot(node: XmlNode, name: string): XmlNode {
  if (node.name !== name) throw malformedXml();
  return node;
}

export { malformedXml };
