// BeaconMeshMonitor: under construction.
