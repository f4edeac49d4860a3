"""Remote file layer over SFTP."""
