/** The files feature's job kinds, apart from the modules that enqueue them, which import each other. */
export const BLOB_DELETE_JOB = 'blob.delete';
export const EXPIRY_SWEEP_JOB = 'files.expire';
