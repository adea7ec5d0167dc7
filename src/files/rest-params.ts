/** Path parameters shared by the files feature's REST routes. */
import { z } from 'zod';

export const fileParams = z.object({ uuid: z.string().meta({ description: "The file's UUID." }) });
