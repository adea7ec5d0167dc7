/**
 * Every check `stowage doctor` runs: the kernel's, then those features contribute. A feature that
 * needs an outside piece (a daemon, a program) writes a DoctorCheck (src/doctor/check.ts) in its
 * folder and appends it here.
 */
import type { DoctorCheck } from './doctor/check.js';
import { systemChecks } from './doctor/system.js';
import { addonDoctorChecks } from './addons/doctor.js';
import { sandboxCheck } from './doctor/sandbox.js';

export const doctorChecks: DoctorCheck[] = [...systemChecks, sandboxCheck, ...addonDoctorChecks];
