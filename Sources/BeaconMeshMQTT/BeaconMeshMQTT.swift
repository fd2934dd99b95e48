// BeaconMeshMQTT: under construction.
