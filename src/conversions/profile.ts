/**
 * The settings every soffice profile starts with (`<profile>/user/registrymodifications.xcu`,
 * which LibreOffice reads before the document): links are never updated on load (Writer, Calc),
 * formulas are not recalculated on load (a WEBSERVICE() keeps its stored result), links from
 * untrusted referers are blocked, and macros never run. The sandbox already keeps every
 * converter from reaching anything outside its work folder; these settings keep LibreOffice from
 * trying.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';

interface Setting {
  path: string;
  name: string;
  value: string;
}

const SETTINGS: Setting[] = [
  // Writer: 0 = never update links when loading (1 on request, 2 always).
  { path: '/org.openoffice.Office.Writer/Content/Update', name: 'Link', value: '0' },
  // Calc: 1 = never (0 always, 2 on request).
  { path: '/org.openoffice.Office.Calc/Content/Update', name: 'Link', value: '1' },
  { path: '/org.openoffice.Office.Calc/Formula/Load', name: 'OOXMLRecalcMode', value: '1' },
  { path: '/org.openoffice.Office.Calc/Formula/Load', name: 'ODFRecalcMode', value: '1' },
  { path: '/org.openoffice.Office.Common/Security/Scripting', name: 'BlockUntrustedRefererLinks', value: 'true' },
  // 3 = very high: only macros from trusted locations, and there are none.
  { path: '/org.openoffice.Office.Common/Security/Scripting', name: 'MacroSecurityLevel', value: '3' },
  { path: '/org.openoffice.Office.Common/Security/Scripting', name: 'DisableMacrosExecution', value: 'true' },
];

const XCU = `<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
${SETTINGS.map((s) => `<item oor:path="${s.path}"><prop oor:name="${s.name}" oor:op="fuse"><value>${s.value}</value></prop></item>`).join('\n')}
</oor:items>
`;

/** Writes the settings into the profile directory `dir` (the `-env:UserInstallation` of a run). */
export async function writeSafeProfile(dir: string): Promise<void> {
  await fsp.mkdir(path.join(dir, 'user'), { recursive: true });
  await fsp.writeFile(path.join(dir, 'user', 'registrymodifications.xcu'), XCU);
}
