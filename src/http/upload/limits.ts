/** Limits of multipart/form-data bodies, shared by the server's parser and the /base/ route. */
export const MAX_FILES_PER_REQUEST = 100;
