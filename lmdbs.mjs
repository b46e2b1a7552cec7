import { open } from 'lmdb';
import fs from 'node:fs';
fs.rmSync('/tmp/lmdbs', { recursive: true, force: true });
const root = open({ path: '/tmp/lmdbs', maxDbs: 4 });
const db = root.openDB({ name: 'a', encoding: 'binary', keyEncoding: 'binary' });
for (let i = 0; i < 3; i++) {
  fs.writeSync(2, `BEGIN${i}\n`);
  root.transactionSync(() => { db.putSync(Buffer.from('k' + i), Buffer.alloc(100)); });
  fs.writeSync(2, `TXDONE${i}\n`);
  await root.flushed;
  fs.writeSync(2, `FLUSHED${i}\n`);
}
await root.close();
