/** The server's `GET /version` (reference-behavior.md §3.2), read once per page load. */
import { request } from './http';

export interface VersionInfo {
  version: string;
  min_admin_api_version: number;
  max_admin_api_version: number;
  ingress_endpoint: string;
}

let cached: Promise<VersionInfo> | undefined;

export function serverVersion(): Promise<VersionInfo> {
  cached ??= request<VersionInfo>('GET', '/version');
  return cached;
}
