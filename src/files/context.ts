/**
 * The context the files feature's own modules get: AppContext with the whole FileService as
 * `ctx.files` (the other features see only its FileContract, src/file-contract.ts).
 */
import type { AppContext } from '../context.js';
import type { FileService } from './service.js';

export type FilesContext = AppContext<FileService>;
