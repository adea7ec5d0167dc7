/**
 * Response shapes shared by several routes, for their descriptions. They are declared once, in
 * src/core/wire-shapes.ts, where the JSON builders' types are inferred from them.
 */
export {
  anyRestFileSchema,
  contentInfoSchema,
  jsonObject,
  restFileSchema as restFileJson,
  restFileV06Schema,
  restPage,
  uploadInfoSchema as uploadInfoJson,
} from '../../../core/wire-shapes.js';
