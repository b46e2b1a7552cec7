/** The part of fs-native-extensions (Holepunch; ships no types) that src/data-dir.ts uses. */
declare module 'fs-native-extensions' {
  /**
   * Takes an advisory lock on an open file without waiting (Linux: an open-file-description
   * lock, `F_OFD_SETLK`; macOS: `flock`). False when another open file holds it.
   */
  export function tryLock(fd: number, opts?: { shared?: boolean }): boolean;
  export function unlock(fd: number): void;
}
